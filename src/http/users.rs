//! `/v1/users`, `/v1/users/{userId}`, `/v1/me` and the e-mail change.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::domain::field_error::FieldError;
use crate::domain::locale::{Language, Text};
use crate::domain::user::{
    Email, NewAccount, check_new_account, email_in_use, invalid_email, normalize_email,
};
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::mail::Mail;
use crate::oauth::scope::Scope;
use crate::oauth::{password, secret};
use crate::store::DbError;
use crate::store::oauth::{self as oauth_store, EmailConfirmation};
use crate::store::users::{self, NewUser, User};

use super::api::{Api, get, post, put};
use super::auth::{Caller, ClientWith, UserWith, need};
use super::extract::{ApiVersion, JsonBody, parse_id};
use super::render::Json;

/// A confirmation link is valid for a week.
const CONFIRMATION_SECONDS: i64 = 7 * 86_400;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    api.resource(
        get("/users", "listUsers")
            .tag("Users")
            .summary("The users collection root, with a templated `item` link")
            .authenticated()
            .ok(200, "The collection root", "UserList"),
        list,
    )
    .resource(
        post("/users", "createUser")
            .tag("Users")
            .summary("Create an account (client token with scope `create_account`)")
            .description("Body `{email, name, postcode, phoneNumber, password}` (`password` is Souk's own and optional: without it, the owner chooses one when confirming). The account is `unconfirmed` until its owner follows the link mailed to them. A taken e-mail address is the field error `email-in-use`.")
            .authenticated()
            .ok(201, "The new user (Location: its address)", "User")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized]),
        create,
    )
    .resource(
        get("/users/{userId}", "getUser")
            .tag("Users")
            .summary("A user: public fields to anyone, private fields to the user (scope `read`)")
            .authenticated()
            .path_param("userId", "The user id.")
            .ok(200, "The user", "User")
            .errors(&[ValidationFailure, UserNotFound]),
        one,
    )
    .resource(
        get("/me", "me")
            .tag("Users")
            .summary("Redirects (302) to the token's user")
            .description("Needs a user token with scope `read`; a client token is 403.")
            .authenticated()
            .ok_empty(302, "Location: /v1/users/{userId}")
            .errors(&[Unauthorized]),
        me,
    )
    .resource(
        post("/users/{userId}/change-email", "changeEmail")
            .tag("Users")
            .summary("Change the user's e-mail address (confirmed through a link sent to it)")
            .description("Body `{\"newEmail\": ...}`. Only the user themself (scope `read`). Field errors `email-in-use` and `input-invalid`.")
            .authenticated()
            .path_param("userId", "The user id.")
            .ok(200, "`{_links: {self}, message}`", "ChangeEmail")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized, UserNotFound]),
        change_email,
    )
    .resource(
        get("/users/{userId}/brands", "getUserBrands")
            .tag("Users")
            .summary("The brands a user sells")
            .description("Served under `/v2` as in the original, and under `/v1`.")
            .authenticated()
            .path_param("userId", "The user id.")
            .ok(200, "`{_links, brands}`", "Brands")
            .errors(&[ValidationFailure, UserNotFound]),
        brands,
    )
    .resource(
        put("/users/{userId}/brands", "setUserBrands")
            .tag("Users")
            .summary("Set the brands a user sells (the user themself, scope `write`)")
            .description("Body `{\"brands\": [...]}`: at most 50 names of 1 to 50 characters, none twice (ignoring case). Answers the new list.")
            .authenticated()
            .path_param("userId", "The user id.")
            .ok(200, "`{_links, brands}`", "Brands")
            .errors(&[ValidationFailure, InvalidJson, IncorrectContentType, Unauthorized, UserNotFound]),
        set_brands,
    )
}

async fn list(State(state): State<AppState>, ApiVersion(version): ApiVersion) -> Json {
    let hal = state.hal(version);
    Json::ok(json!({
        "_links": hal
            .links(hal.path("/users"), Resource::UserList)
            .plain_templated("item", hal.path("/users/{userId}"))
            .build(),
    }))
}

fn user_json(hal: &Hal, user: &User, private: bool) -> Value {
    let path = hal.path(&format!("/users/{}", user.id));
    let mut body = json!({
        "_links": hal
            .links(&path, Resource::User)
            .rel(Rel::ChangeEmail, format!("{path}/change-email"))
            .rel(Rel::UserBrands, format!("{path}/brands"))
            .build(),
        "userId": user.id,
        "name": user.name,
        "locale": user.locale,
        "status": if user.confirmed { "confirmed" } else { "unconfirmed" },
        "confirmDate": user.confirm_date.map(crate::domain::time::format_timestamp),
        "dealerPackage": user.dealer_package,
    });
    if private {
        body["email"] = json!(user.email);
        body["phoneNumber"] = json!(user.phone_number);
        body["postcode"] = json!(user.postcode);
    }
    body
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    email: Option<String>,
    name: Option<String>,
    postcode: Option<String>,
    phone_number: Option<String>,
    password: Option<String>,
}

async fn create(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    _client: ClientWith<need::CreateAccount>,
    body: Result<JsonBody<CreateBody>, ApiError>,
) -> Result<Json, ApiError> {
    let JsonBody(body) = body?;
    let account = check_new_account(&NewAccount {
        email: body.email.as_deref(),
        // Without a password the owner chooses one when confirming.
        password: body.password.as_deref(),
        name: body.name.as_deref(),
        postcode: body.postcode.as_deref(),
        phone_number: body.phone_number.as_deref(),
    })
    .map_err(ApiError::validation)?;
    let email = account.email.as_str().to_owned();
    let password_hash = match body.password {
        Some(password) => password::hash(password).await,
        None => String::new(),
    };
    let now = state.clock.now();
    let link = secret::new_token();
    let (link_hash, locale) = (secret::hash(&link), state.config.region.as_str().to_owned());
    let (stored_email, name) = (email.clone(), body.name.clone().unwrap_or_default());
    let created = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                let id = users::insert(
                    conn,
                    &NewUser {
                        email: &stored_email,
                        password_hash: &password_hash,
                        name: &name,
                        postcode: body.postcode.as_deref(),
                        phone_number: body.phone_number.as_deref(),
                        locale: &locale,
                        confirmed: false,
                    },
                    now,
                )
                .await?;
                oauth_store::insert_confirmation(
                    conn,
                    &link_hash,
                    &EmailConfirmation {
                        user_id: id,
                        purpose: "account".into(),
                        new_email: None,
                    },
                    now + CONFIRMATION_SECONDS,
                )
                .await?;
                users::get(conn, id).await?.ok_or(DbError::NotFound)
            })
        })
        .await;
    let user = match created {
        Ok(user) => user,
        Err(DbError::UniqueViolation(_)) => {
            return Err(ApiError::validation(vec![email_in_use(
                "email",
                &account.email,
            )]));
        }
        Err(e) => return Err(e.into()),
    };
    send_confirmation(&state, &user.email, &link, Purpose::Account).await;
    let hal = state.hal(version);
    let body = user_json(&hal, &user, true);
    Ok(Json::created(
        hal.path(&format!("/users/{}", user.id)),
        body,
    ))
}

enum Purpose {
    Account,
    EmailChange,
}

/// Mails a confirmation link. A failure is logged, not answered: the account exists, and
/// the operator can resend (the link is in the outbox or the SMTP log).
async fn send_confirmation(state: &AppState, to: &str, link: &str, purpose: Purpose) {
    let url = format!("{}/accounts/confirm?token={link}", state.config.auth_url);
    let dutch = state.config.region.language() == Language::Dutch;
    let (subject, intro) = match (purpose, dutch) {
        (Purpose::Account, true) => (
            "Bevestig je Souk-account",
            "Welkom bij Souk! Bevestig je account via deze link:",
        ),
        (Purpose::Account, false) => (
            "Confirmez votre compte Souk",
            "Bienvenue sur Souk ! Confirmez votre compte via ce lien :",
        ),
        (Purpose::EmailChange, true) => (
            "Bevestig je nieuwe e-mailadres",
            "Bevestig via deze link dat dit je nieuwe e-mailadres voor Souk is:",
        ),
        (Purpose::EmailChange, false) => (
            "Confirmez votre nouvelle adresse e-mail",
            "Confirmez via ce lien qu'il s'agit de votre nouvelle adresse e-mail pour Souk :",
        ),
    };
    let footer = if dutch {
        "De link is een week geldig. Heb je dit niet aangevraagd? Dan kun je deze mail negeren."
    } else {
        "Le lien est valable une semaine. Vous n'êtes pas à l'origine de cette demande ? Ignorez ce message."
    };
    let mail = Mail {
        to: to.to_owned(),
        subject: subject.to_owned(),
        body: format!("{intro}\n\n{url}\n\n{footer}"),
    };
    if let Err(e) = state.mailer.send(&mail).await {
        tracing::error!(error = %e, "cannot send a confirmation mail");
    }
}

async fn one(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    caller: Caller,
    Path(raw): Path<String>,
) -> Result<Json, ApiError> {
    let id = parse_id("userId", &raw)?;
    let user = state
        .db
        .read(move |conn| Box::pin(async move { users::get(conn, id).await }))
        .await?
        .ok_or(ErrorCode::UserNotFound)?;
    let private = caller.user_id == Some(id) && caller.scopes.contains(Scope::Read);
    Ok(Json::ok(user_json(&state.hal(version), &user, private)))
}

async fn me(
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Read>,
) -> Result<Response, ApiError> {
    let mut response = StatusCode::FOUND.into_response();
    let location = format!("/{version}/users/{user}");
    response.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(&location).map_err(ApiError::internal)?,
    );
    Ok(response)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChangeEmailBody {
    new_email: Option<String>,
}

async fn change_email(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Read>,
    Path(raw): Path<String>,
    body: Result<JsonBody<ChangeEmailBody>, ApiError>,
) -> Result<Json, ApiError> {
    let id = parse_id("userId", &raw)?;
    if user != id {
        return Err(ApiError::new(ErrorCode::Unauthorized));
    }
    let JsonBody(body) = body?;
    let given = body.new_email.unwrap_or_default();
    let Some(new_email) = Email::parse(&given) else {
        return Err(ApiError::validation(vec![invalid_email(
            "newEmail",
            &normalize_email(&given),
        )]));
    };
    let email = new_email.as_str().to_owned();
    let now = state.clock.now();
    let link = secret::new_token();
    let (link_hash, wanted) = (secret::hash(&link), email.clone());
    let taken = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                if users::by_email(conn, &wanted).await?.is_some() {
                    return Ok(true);
                }
                oauth_store::insert_confirmation(
                    conn,
                    &link_hash,
                    &EmailConfirmation {
                        user_id: id,
                        purpose: "email-change".into(),
                        new_email: Some(wanted),
                    },
                    now + CONFIRMATION_SECONDS,
                )
                .await?;
                Ok::<_, DbError>(false)
            })
        })
        .await?;
    if taken {
        return Err(ApiError::validation(vec![email_in_use(
            "newEmail", &new_email,
        )]));
    }
    send_confirmation(&state, &email, &link, Purpose::EmailChange).await;
    let hal = state.hal(version);
    let language = state.config.region.language();
    Ok(Json::ok(json!({
        "_links": {"self": {"href": hal.path(&format!("/users/{id}/change-email"))}},
        "message": Text::new(
            "We hebben een bevestigingslink naar het nieuwe e-mailadres gestuurd. De wijziging gaat in zodra je die link volgt.",
            "Nous avons envoyé un lien de confirmation à la nouvelle adresse. Le changement prend effet dès que vous suivez ce lien.",
        ).get(language),
    })))
}

fn brands_json(hal: &Hal, id: i64, brands: &[String]) -> Value {
    json!({
        "_links": {
            "self": {"href": hal.path(&format!("/users/{id}/brands"))},
            "describedby": {"href": hal.describedby(Resource::Brands)},
        },
        "brands": brands,
    })
}

async fn brands(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    Path(raw): Path<String>,
) -> Result<Json, ApiError> {
    let id = parse_id("userId", &raw)?;
    let brands = state
        .db
        .read(move |conn| {
            Box::pin(async move {
                if users::get(conn, id).await?.is_none() {
                    return Ok(None);
                }
                users::brands(conn, id).await.map(Some)
            })
        })
        .await?
        .ok_or(ErrorCode::UserNotFound)?;
    Ok(Json::ok(brands_json(&state.hal(version), id, &brands)))
}

#[derive(Deserialize)]
struct BrandsBody {
    brands: Option<Vec<String>>,
}

async fn set_brands(
    State(state): State<AppState>,
    ApiVersion(version): ApiVersion,
    UserWith(user, _): UserWith<need::Write>,
    Path(raw): Path<String>,
    body: Result<JsonBody<BrandsBody>, ApiError>,
) -> Result<Json, ApiError> {
    let id = parse_id("userId", &raw)?;
    if user != id {
        return Err(ApiError::new(ErrorCode::Unauthorized));
    }
    let JsonBody(body) = body?;
    let Some(brands) = body.brands else {
        return Err(ApiError::validation(vec![FieldError::new(
            "brands",
            "missing",
            Text::new("is verplicht", "est obligatoire"),
        )]));
    };
    let brands = crate::domain::user::check_brands(&brands).map_err(ApiError::validation)?;
    let stored = brands.clone();
    state
        .db
        .write(move |conn| Box::pin(async move { users::set_brands(conn, id, &stored).await }))
        .await?;
    Ok(Json::ok(brands_json(&state.hal(version), id, &brands)))
}
