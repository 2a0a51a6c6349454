//! Sign-in and consent at the authorization endpoint: the browser session, the forms, and
//! the way back to the client.

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use maud::html;

use crate::domain::locale::Language;
use crate::error::ApiError;
use crate::oauth::session as policy;
use crate::oauth::{Authorization, AuthorizeError, BrowserSession};
use crate::state::AppState;
use crate::usecase::authorization;
use crate::usecase::sign_in::{self, SignIn};

use super::{AUTHORIZE_PATH, Form, error_page, failure_page, page, redirect, t};

const SESSION_COOKIE: &str = "souk_session";

/// The browser session: its id (raw, from the cookie) and its record (stored once signed
/// in, a visitor's before).
struct Session {
    id: String,
    record: BrowserSession,
    /// A new session whose cookie must be set on the answer.
    fresh: bool,
}

impl Session {
    fn opened(session: sign_in::Session) -> Session {
        Session {
            id: session.id,
            record: session.record,
            fresh: true,
        }
    }
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// The session the browser's cookie `id` names: a stored one, or a visitor's.
async fn cookie_session(state: &AppState, id: String) -> Result<Session, ApiError> {
    let now = state.clock.now();
    let lookup = id.clone();
    let record = state
        .db
        .read(move |conn| Box::pin(async move { sign_in::session(conn, &lookup, now).await }))
        .await?;
    Ok(Session {
        id,
        record,
        fresh: false,
    })
}

fn with_cookie(state: &AppState, mut response: Response, session: &Session) -> Response {
    if session.fresh {
        let secure = if state.config.auth_url.starts_with("https://") {
            "; Secure"
        } else {
            ""
        };
        let cookie = format!(
            "{SESSION_COOKIE}={}; Path=/accounts; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            session.id,
            policy::SESSION_SECONDS
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

async fn validate(state: &AppState, uri: &Uri) -> Result<Authorization, Response> {
    let pairs: Vec<(String, String)> = uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let outcome = state
        .db
        .read(move |conn| {
            Box::pin(async move { authorization::validate_authorization(conn, &pairs).await })
        })
        .await
        .map_err(|e| failure_page(state, e))?;
    outcome.map_err(|error| match error {
        AuthorizeError::Page(why) => error_page(state, StatusCode::BAD_REQUEST, &why),
        AuthorizeError::Redirect { url, .. } => redirect(&url),
    })
}

pub(super) async fn authorize(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let authorization = match validate(&state, &uri).await {
        Ok(a) => a,
        Err(response) => return response,
    };
    let session = match session_cookie(&headers) {
        Some(id) => match cookie_session(&state, id).await {
            Ok(session) => session,
            Err(e) => return failure_page(&state, e),
        },
        None => Session::opened(sign_in::new_visitor(state.clock.now())),
    };
    let response = match session.record.user_id {
        Some(user_id) => after_sign_in(&state, &authorization, &session, user_id, &uri).await,
        None => login_page(&state, &authorization, &session, &uri, None, StatusCode::OK),
    };
    with_cookie(&state, response, &session)
}

/// A signed-in user: straight back to the client if they consented to these scopes
/// before, else the consent page.
async fn after_sign_in(
    state: &AppState,
    authorization: &Authorization,
    session: &Session,
    user_id: i64,
    uri: &Uri,
) -> Response {
    let asked = authorization.clone();
    let consented = state
        .db
        .read(move |conn| Box::pin(async move { sign_in::consented(conn, user_id, &asked).await }))
        .await;
    let consented = match consented {
        Ok(consented) => consented,
        Err(e) => return failure_page(state, e),
    };
    if consented {
        return grant(state, authorization, user_id, false).await;
    }
    consent_page(state, authorization, session, uri)
}

async fn grant(
    state: &AppState,
    authorization: &Authorization,
    user_id: i64,
    remember: bool,
) -> Response {
    let now = state.clock.now();
    let allowed = authorization.clone();
    let code = state
        .db
        .write(move |conn| {
            Box::pin(async move { sign_in::allow(conn, &allowed, user_id, remember, now).await })
        })
        .await;
    match code {
        Ok(code) => redirect(&authorization.redirect_with(&[("code", &code)])),
        Err(e) => failure_page(state, e),
    }
}

/// Where the forms post: the authorization endpoint with the request's own query.
fn action(uri: &Uri) -> String {
    format!("{AUTHORIZE_PATH}?{}", uri.query().unwrap_or(""))
}

fn login_page(
    state: &AppState,
    authorization: &Authorization,
    session: &Session,
    uri: &Uri,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    let l = state.config.region.language();
    page(
        state,
        status,
        t(l, "Inloggen", "Se connecter"),
        html! {
            h1 { (t(l, "Inloggen bij Souk", "Se connecter à Souk")) }
            p class="lead" {
                (t(l, "Log in om verder te gaan naar", "Connectez-vous pour continuer vers"))
                " " span class="client" { (authorization.client.name) } "."
            }
            @if let Some(error) = error {
                p class="error" role="alert" { (error) }
            }
            form method="post" action=(action(uri)) {
                input type="hidden" name="csrf_token" value=(session.record.csrf_token);
                label for="username" { (t(l, "E-mailadres", "Adresse e-mail")) }
                input id="username" name="username" type="email" autocomplete="username" required autofocus;
                label for="password" { (t(l, "Wachtwoord", "Mot de passe")) }
                input id="password" name="password" type="password" autocomplete="current-password" required;
                button type="submit" { (t(l, "Inloggen", "Se connecter")) }
            }
            p class="fine" {
                (t(
                    l,
                    "Je wachtwoord gaat alleen naar Souk, nooit naar de toepassing.",
                    "Votre mot de passe n'est envoyé qu'à Souk, jamais à l'application.",
                ))
            }
        },
    )
}

fn consent_page(
    state: &AppState,
    authorization: &Authorization,
    session: &Session,
    uri: &Uri,
) -> Response {
    let l = state.config.region.language();
    page(
        state,
        StatusCode::OK,
        t(l, "Toestemming geven", "Donner l'autorisation"),
        html! {
            h1 { (t(l, "Toegang verlenen?", "Autoriser l'accès ?")) }
            p class="lead" {
                span class="client" { (authorization.client.name) }
                " " (t(l, "wil namens jou:", "souhaite, en votre nom :"))
            }
            ul class="scopes" {
                @for scope in authorization.scopes.iter() {
                    li { (scope.describe(l == Language::Dutch)) }
                }
            }
            form method="post" action=(action(uri)) {
                input type="hidden" name="csrf_token" value=(session.record.csrf_token);
                button type="submit" name="decision" value="allow" { (t(l, "Toestaan", "Autoriser")) }
                button type="submit" name="decision" value="deny" class="secondary" { (t(l, "Weigeren", "Refuser")) }
            }
            p class="fine" {
                (t(
                    l,
                    "Je kunt deze toegang later weer intrekken.",
                    "Vous pourrez retirer cet accès plus tard.",
                ))
            }
        },
    )
}

pub(super) async fn submit(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorization = match validate(&state, &uri).await {
        Ok(a) => a,
        Err(response) => return response,
    };
    let form = Form::parse(&body);
    let field = |name: &str| form.field(name);
    let l = state.config.region.language();
    // The CSRF token must come with the session it was issued to (a form posted without
    // a cookie has none).
    let session = match session_cookie(&headers) {
        Some(id) => match cookie_session(&state, id).await {
            Ok(session) => Some(session),
            Err(e) => return failure_page(&state, e),
        },
        None => None,
    };
    let csrf_token = field("csrf_token");
    let Some(session) = session.filter(|s| policy::csrf_matches(csrf_token.as_deref(), &s.record))
    else {
        return error_page(
            &state,
            StatusCode::FORBIDDEN,
            t(
                l,
                "Het formulier is verlopen of ongeldig. Begin opnieuw.",
                "Le formulaire a expiré ou n'est pas valide. Recommencez.",
            ),
        );
    };
    if let Some(decision) = field("decision") {
        let Some(user_id) = session.record.user_id else {
            return login_page(&state, &authorization, &session, &uri, None, StatusCode::OK);
        };
        return match decision.as_str() {
            "allow" => grant(&state, &authorization, user_id, true).await,
            _ => redirect(&authorization.redirect_with(&[("error", "access_denied")])),
        };
    }
    let username = field("username").unwrap_or_default();
    let password = field("password").unwrap_or_default();
    let proxies = state.config.trusted_proxy_list();
    let address = super::client::client_address(peer.ip(), &headers, &proxies).to_string();
    let now = state.clock.now();
    let outcome = sign_in::sign_in(&state.db, &username, password, &address, now).await;
    match outcome {
        Err(e) => failure_page(&state, e),
        Ok(SignIn::Locked { retry_after }) => {
            let mut response = login_page(
                &state,
                &authorization,
                &session,
                &uri,
                Some(t(
                    l,
                    "Te veel mislukte pogingen. Probeer het over een kwartier opnieuw.",
                    "Trop de tentatives échouées. Réessayez dans un quart d'heure.",
                )),
                StatusCode::TOO_MANY_REQUESTS,
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            response
        }
        // One message for an unknown address and a wrong password.
        Ok(SignIn::Refused) => login_page(
            &state,
            &authorization,
            &session,
            &uri,
            Some(t(
                l,
                "Onjuist e-mailadres of wachtwoord.",
                "Adresse e-mail ou mot de passe incorrect.",
            )),
            StatusCode::OK,
        ),
        Ok(SignIn::SignedIn { user_id, session }) => {
            let signed_in = Session::opened(session);
            let response = after_sign_in(&state, &authorization, &signed_in, user_id, &uri).await;
            with_cookie(&state, response, &signed_in)
        }
    }
}
