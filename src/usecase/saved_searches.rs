//! Saved searches: a user keeps search parameters to run again (and, with an alert, to
//! hear of new matches). Only the owner may see or change one; to anyone else it does not
//! exist.

use crate::domain::field_error::{FieldError, names_field};
use crate::domain::locale::Text;
use crate::domain::search::request::SearchRequest;
use crate::domain::search::saved::{MAX_PER_USER, Refused, SavedRequest, SavedSearchInput};
use crate::store::saved_searches::{self, SavedSearch};
use crate::store::{Conn, alerts, users};

use super::{Error, Thing, search};

/// Saves a search for `user` from what the client sent (`input`: see [`Error::Request`]).
pub async fn create<R>(
    conn: &mut dyn Conn,
    user: i64,
    input: Result<SavedSearchInput, R>,
    now: i64,
) -> Result<SavedSearch, Error<R>> {
    let (request, alert) = checked(conn, input).await?;
    // Concurrent saves of one user wait here, so each counts the others' searches.
    users::lock(conn, user).await?;
    saved_searches::insert(conn, user, &request.query_string(), alert, now)
        .await?
        .ok_or_else(|| {
            Error::Invalid(vec![FieldError::new(
                "searchRequest",
                "too-many",
                Text::new(
                    format!("hoogstens {MAX_PER_USER} bewaarde zoekopdrachten per gebruiker"),
                    format!("au plus {MAX_PER_USER} recherches enregistrées par utilisateur"),
                ),
            )])
        })
}

/// Saved search `id`, to its owner.
pub async fn get(conn: &mut dyn Conn, user: i64, id: i64) -> Result<SavedSearch, Error> {
    owned(conn, user, id).await
}

/// Saved search `id` if `user` owns it; to anyone else it does not exist.
async fn owned<R>(conn: &mut dyn Conn, user: i64, id: i64) -> Result<SavedSearch, Error<R>> {
    saved_searches::get(conn, id)
        .await?
        .filter(|saved| saved.user_id == user)
        .ok_or(Error::NotFound(Thing::SavedSearch))
}

/// The saved searches of `user`, newest first (at most [`MAX_PER_USER`]).
pub async fn of_user(conn: &mut dyn Conn, user: i64) -> Result<Vec<SavedSearch>, Error> {
    Ok(saved_searches::of_user(conn, user).await?)
}

/// Replaces the owner's saved search `id` with what the client sent.
pub async fn replace<R>(
    conn: &mut dyn Conn,
    user: i64,
    id: i64,
    input: Result<SavedSearchInput, R>,
    now: i64,
) -> Result<SavedSearch, Error<R>> {
    // Held first: an alert round that read the old request records its matches before
    // they are forgotten, or reads the new one (`alerts::alerting`).
    saved_searches::lock(conn, id).await?;
    let saved = owned(conn, user, id).await?;
    let (request, alert) = checked(conn, input).await?;
    let request = request.query_string();
    if request != saved.request {
        // What matched the old request is no news of the new one, nor to be mailed under
        // its name.
        alerts::forget_matches(conn, id).await?;
    }
    saved_searches::replace(conn, id, &request, alert, now)
        .await?
        .ok_or(Error::NotFound(Thing::SavedSearch))
}

/// Deletes the owner's saved search `id`.
pub async fn delete(conn: &mut dyn Conn, user: i64, id: i64) -> Result<(), Error> {
    get(conn, user, id).await?;
    Ok(saved_searches::delete(conn, id).await?)
}

/// The input checked: its shape, then its category and attributes as a search checks them
/// (each field named by its path in `searchRequest`).
async fn checked<R>(
    conn: &mut dyn Conn,
    input: Result<SavedSearchInput, R>,
) -> Result<(SavedRequest, crate::domain::search::saved::Alert), Error<R>> {
    let (request, alert) = match input.map_err(Error::Request)?.check() {
        Ok(checked) => checked,
        // What only the database can judge of the rest joins the errors: one answer
        // lists them all.
        // (Not without the category it meant: the rest's filters would each be called
        // unknown.)
        Err(Refused { mut errors, rest }) => {
            if let Some(rest) = rest.filter(|_| !names_field(&errors, "searchRequest.categoryId")) {
                errors.extend(found_by_the_database::<R>(conn, &rest).await?);
            }
            return Err(Error::Invalid(errors));
        }
    };
    match found_by_the_database::<R>(conn, &request.request).await? {
        errors if errors.is_empty() => Ok((request, alert)),
        errors => Err(Error::Invalid(errors)),
    }
}

/// The errors that only the database finds in a search request (a category, its
/// attributes, a postcode), each field named by its path in `searchRequest`.
async fn found_by_the_database<R>(
    conn: &mut dyn Conn,
    request: &SearchRequest,
) -> Result<Vec<FieldError>, Error<R>> {
    match search::check::<R>(conn, request).await {
        Ok(()) => Ok(Vec::new()),
        Err(Error::Invalid(errors)) => Ok(errors
            .into_iter()
            .map(|mut error| {
                for field in &mut error.fields {
                    *field = SavedRequest::path_of(field);
                }
                error
            })
            .collect()),
        Err(other) => Err(other),
    }
}
