//! `/v1/users`, `/v1/users/{userId}`, `/v1/me` and the e-mail change.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::Caller;
use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::user::{Email, NewAccount, check_new_account, invalid_email, normalize_email};
use crate::error::{ApiError, ErrorCode};
use crate::hal::{Hal, Rel, Resource};
use crate::oauth::password;
use crate::oauth::scope::Scope;
use crate::state::AppState;
use crate::store::users::{self, User};
use crate::usecase::accounts::{self, LinkMail, Registration};

use super::api::{Api, Operation, get, post, put};
use super::auth::{ClientWith, UserWith, need};
use super::extract::{Context, JsonBody, UserPath};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    let users = |operation: Operation| operation.tag("Users").authenticated();
    let one_user = |operation: Operation| users(operation).path_param("userId", "The user id.");
    let brands_of =
        |operation: Operation| one_user(operation).ok(200, "`{_links, brands}`", "Brands");
    api.resource(
        users(get("/users", "listUsers"))
            .summary("The users collection root, with a templated `item` link")
            .ok(200, "The collection root", "UserList"),
        list,
    )
    .resource(
        users(post("/users", "createUser"))
            .summary("Create an account (client token with scope `create_account`)")
            .description("Body `{email, name, postcode, phoneNumber, password}` (`password` is Souk's own and optional: without it, the owner chooses one when confirming). The account is `unconfirmed` until its owner follows the link mailed to them. A taken e-mail address is the field error `email-in-use`.")
            .body("application/json", "NewUser")
            .ok(201, "The new user (Location: its address)", "User")
            .errors(&[Unauthorized]),
        create,
    )
    .resource(
        one_user(get("/users/{userId}", "getUser"))
            .summary("A user: public fields to anyone, private fields to the user (scope `read`)")
            .ok(200, "The user", "User")
            .errors(&[ValidationFailure, UserNotFound]),
        one,
    )
    .resource(
        users(get("/me", "me"))
            .summary("Redirects (302) to the token's user")
            .description("Needs a user token with scope `read`; a client token is 403.")
            .ok_empty(302, "Location: /v1/users/{userId}")
            .errors(&[Unauthorized]),
        me,
    )
    .resource(
        one_user(post("/users/{userId}/change-email", "changeEmail"))
            .summary("Change the user's e-mail address (confirmed through a link sent to it)")
            .description("Body `{\"newEmail\": ...}`. Only the user themself (scope `read`). Field errors `email-in-use` and `input-invalid`.")
            .body("application/json", "EmailChange")
            .ok(200, "`{_links: {self}, message}`", "ChangeEmail")
            .errors(&[Unauthorized, UserNotFound]),
        change_email,
    )
    .resource(
        brands_of(get("/users/{userId}/brands", "getUserBrands"))
            .summary("The brands a user sells")
            .description("Served under `/v2` as in the original, and under `/v1`.")
            .errors(&[ValidationFailure, UserNotFound]),
        brands,
    )
    .resource(
        brands_of(put("/users/{userId}/brands", "setUserBrands"))
            .summary("Set the brands a user sells (the user themself, scope `write`)")
            .description("Body `{\"brands\": [...]}`: at most 50 names of 1 to 50 characters, none twice (ignoring case). Answers the new list.")
            .body("application/json", "BrandList")
            .errors(&[Unauthorized, UserNotFound]),
        set_brands,
    )
}

async fn list(Context { hal, .. }: Context) -> Json {
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
            .rel(Rel::UserReviews, format!("{path}/reviews"))
            .rel(Rel::UserAdvertisements, format!("{path}/advertisements"))
            .build(),
        "userId": user.id,
        "name": user.name,
        "locale": user.locale.as_str(),
        "status": user.status.as_str(),
        "confirmDate": user.confirm_date.map(crate::domain::time::format_timestamp),
        "dealerPackage": user.dealer_package.as_str(),
        "postcode": user.postcode,
    });
    // api.md: "Email and phone only to the user themself".
    if private {
        body["email"] = json!(user.email.as_str());
        body["phoneNumber"] = json!(user.phone_number);
    }
    body
}

async fn create(
    Context { state, hal }: Context,
    _client: ClientWith<need::CreateAccount>,
    body: Result<JsonBody<NewAccount>, ApiError>,
) -> Result<Json, ApiError> {
    let JsonBody(body) = body?;
    let account = check_new_account(&body).map_err(ApiError::validation)?;
    // Without a password the owner chooses one when confirming.
    let password_hash = match body.password {
        Some(password) => password::hash(password).await,
        None => String::new(),
    };
    let (locale, now) = (state.config.region, state.clock.now());
    let registration = Registration::SelfService(link_mail(&state));
    let registered = state
        .db
        .write(move |conn| {
            Box::pin(async move {
                accounts::register(conn, &account, &password_hash, locale, registration, now).await
            })
        })
        .await?;
    state.mail.wake();
    let user = registered.user;
    let body = user_json(&hal, &user, true);
    Ok(Json::created(
        hal.path(&format!("/users/{}", user.id)),
        body,
    ))
}

/// How this deployment writes confirmation links: to its authorization server, in its
/// language.
fn link_mail(state: &AppState) -> LinkMail {
    LinkMail {
        auth_url: state.config.auth_url.clone(),
        language: state.config.region.language(),
    }
}

async fn one(
    Context { state, hal }: Context,
    caller: Caller,
    UserPath(id): UserPath,
) -> Result<Json, ApiError> {
    let user = state
        .db
        .read(move |conn| Box::pin(async move { users::get(conn, id).await }))
        .await?
        .ok_or(ErrorCode::UserNotFound)?;
    let private = caller.user_id == Some(id) && caller.scopes.contains(Scope::Read);
    Ok(Json::ok(user_json(&hal, &user, private)))
}

async fn me(
    Context { hal, .. }: Context,
    UserWith(user, _): UserWith<need::Read>,
) -> Result<Response, ApiError> {
    let mut response = StatusCode::FOUND.into_response();
    let location = hal.path(&format!("/users/{user}"));
    response.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(&location).map_err(ApiError::internal)?,
    );
    Ok(response)
}

/// The caller's own account: the user of a token with the scope `N` who is the `{userId}`
/// of the path (403 otherwise, after a malformed id's 400). Being an extractor, it answers
/// before the body is read, so that a caller who may not act learns nothing from it.
struct OwnAccount<N>(i64, PhantomData<N>);

impl<N: need::Needs, S: Send + Sync> FromRequestParts<S> for OwnAccount<N> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let UserWith(user, _) = UserWith::<N>::from_request_parts(parts, state).await?;
        let UserPath(id) = UserPath::from_request_parts(parts, state).await?;
        if user != id {
            return Err(ApiError::new(ErrorCode::Unauthorized));
        }
        Ok(OwnAccount(id, PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChangeEmailBody {
    new_email: Option<String>,
}

async fn change_email(
    Context { state, hal }: Context,
    OwnAccount(id, _): OwnAccount<need::Read>,
    JsonBody(body): JsonBody<ChangeEmailBody>,
) -> Result<Json, ApiError> {
    let Some(given) = body.new_email else {
        return Err(ApiError::validation(vec![FieldError::missing("newEmail")]));
    };
    let Some(email) = Email::parse(&given) else {
        return Err(ApiError::validation(vec![invalid_email(
            "newEmail",
            &normalize_email(&given),
        )]));
    };
    let (how, now) = (link_mail(&state), state.clock.now());
    state
        .db
        .write(move |conn| {
            Box::pin(
                async move { accounts::request_email_change(conn, id, &email, &how, now).await },
            )
        })
        .await?;
    state.mail.wake();
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

async fn brands(Context { state, hal }: Context, UserPath(id): UserPath) -> Result<Json, ApiError> {
    let brands = state
        .db
        .read(move |conn| Box::pin(accounts::brands(conn, id)))
        .await?;
    Ok(Json::ok(brands_json(&hal, id, &brands)))
}

#[derive(Deserialize)]
struct BrandsBody {
    brands: Option<Vec<String>>,
}

async fn set_brands(
    Context { state, hal }: Context,
    OwnAccount(id, _): OwnAccount<need::Write>,
    JsonBody(body): JsonBody<BrandsBody>,
) -> Result<Json, ApiError> {
    let brands = state
        .db
        .write(move |conn| Box::pin(accounts::set_brands(conn, id, body.brands)))
        .await?;
    Ok(Json::ok(brands_json(&hal, id, &brands)))
}
