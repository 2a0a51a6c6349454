//! The pages a person sees at the authorization endpoint: sign-in and consent, rendered by
//! the server in the deployment's language, usable without JavaScript.

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::domain::locale::Language;
use crate::error::{ApiError, ErrorCode};
use crate::oauth::session as policy;
use crate::oauth::{Authorization, AuthorizeError, BrowserSession, password, secret};
use crate::state::AppState;
use crate::usecase::sign_in::{self, SignIn};
use crate::usecase::{self, Conflict, accounts, authorization};

use super::api::{Api, Operation, get, post};
use super::docs::escape;
use super::oauth::AUTHORIZE_PATH;

const SESSION_COOKIE: &str = "souk_session";
const STYLESHEET: &str = include_str!("../../assets/accounts.css");

pub fn routes(api: Api) -> Api {
    let tag = "Authorization server";
    api.route(
        authorization_request(get(AUTHORIZE_PATH, "authorize"))
            .tag(tag)
            .summary("The authorization endpoint: sign-in and consent pages (HTML)")
            .description("`response_type=code`, `client_id`, `redirect_uri`, optional `scope`, `state`, `code_challenge` (S256). An unknown client or a redirect_uri that does not match is shown as an error page; every other error is redirected to the client.")
            .media(200, "The sign-in or consent page", "text/html")
            .ok_empty(302, "Back to the client with `code` or `error`")
            .media(400, "Error page: unknown client or redirect_uri", "text/html")
            .errors(&[ErrorCode::ServiceUnavailable]),
        authorize,
    )
    .route(
        authorization_request(post(AUTHORIZE_PATH, "authorizeSubmit"))
            .tag(tag)
            .summary("The sign-in and consent forms post here (with the CSRF token)")
            .body("application/x-www-form-urlencoded", "SignInForm")
            .media(200, "The consent page, or the sign-in page again", "text/html")
            .ok_empty(302, "Back to the client")
            .media(400, "Error page: unknown client or redirect_uri", "text/html")
            .media(403, "Missing or wrong CSRF token or session", "text/html")
            .media(429, "Too many failed sign-ins", "text/html")
            .errors(&[ErrorCode::ServiceUnavailable]),
        submit,
    )
    .route(
        get("/accounts/confirm", "confirmPage")
            .tag(tag)
            .summary("The page behind a mailed confirmation link (account or new e-mail address)")
            .required_query_param("token", json!({"type": "string"}), "The token of the mailed link.")
            .media(200, "A page with a confirm button (and a password form if the account has none)", "text/html")
            .media(400, "The link has no token", "text/html")
            .errors(&[ErrorCode::ServiceUnavailable]),
        confirm_page,
    )
    .route(
        post("/accounts/confirm", "confirm")
            .tag(tag)
            .summary("Confirms an account or a new e-mail address (the form of the confirmation page)")
            .body("application/x-www-form-urlencoded", "ConfirmationForm")
            .media(200, "Confirmed", "text/html")
            .media(400, "Unknown, used or expired link, or a password too short", "text/html")
            .media(409, "The new e-mail address was taken meanwhile", "text/html")
            .errors(&[ErrorCode::ServiceUnavailable]),
        confirm,
    )
    .route(
        get("/accounts/demo-callback", "demoCallback")
            .tag(tag)
            .summary("Sandbox only: where the demo client lands; shows how to exchange the code")
            .media(200, "A page with the code and the curl line that exchanges it", "text/html")
            .errors(&[ErrorCode::NotFound]),
        demo_callback,
    )
    .route(
        get("/accounts/assets/accounts.css", "accountsStylesheet")
            .tag(tag)
            .summary("The stylesheet of the sign-in pages")
            .media(200, "The stylesheet", "text/css"),
        stylesheet,
    )
}

/// The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636), in the query
/// of the page and of the forms it posts.
fn authorization_request(operation: Operation) -> Operation {
    let text = || json!({"type": "string"});
    operation
        .required_query_param("client_id", text(), "The client.")
        .required_query_param("redirect_uri", text(), "One of the client's redirect URIs.")
        .query_param("response_type", text(), "`code`.")
        .query_param(
            "scope",
            text(),
            "Space-separated scopes; the client's defaults without it.",
        )
        .query_param("state", text(), "Returned to the client as it was sent.")
        .query_param("code_challenge", text(), "PKCE (RFC 7636).")
        .query_param("code_challenge_method", text(), "`S256`.")
}

/// Texts of the pages in the deployment's language.
fn t(language: Language, dutch: &'static str, french: &'static str) -> &'static str {
    match language {
        Language::Dutch => dutch,
        Language::French => french,
    }
}

fn page(state: &AppState, status: StatusCode, title: &str, body: &str) -> Response {
    let lang = &state.config.region.as_str()[..2];
    let html = format!(
        "<!doctype html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Souk</title>\
         <link rel=\"stylesheet\" href=\"/accounts/assets/accounts.css\"></head><body>\
         <div class=\"topbar\"><span class=\"logo\">Souk</span></div>\
         <main class=\"card\">{body}</main></body></html>",
        title = escape(title),
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'self'; frame-ancestors 'none'"),
    );
    response
}

fn error_page(state: &AppState, status: StatusCode, why: &str) -> Response {
    let language = state.config.region.language();
    page(
        state,
        status,
        t(language, "Er ging iets mis", "Une erreur s'est produite"),
        &format!(
            "<h1>{}</h1><p class=\"lead\">{}</p><p class=\"error\">{}</p>",
            t(language, "Er ging iets mis", "Une erreur s'est produite"),
            t(
                language,
                "De toepassing die je hierheen stuurde, vroeg iets wat we niet kunnen toestaan.",
                "L'application qui vous a envoyé ici a fait une demande que nous ne pouvons pas accepter.",
            ),
            escape(why)
        ),
    )
}

fn redirect(url: &str) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(url) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The browser session: its id (raw, from the cookie) and what the database holds.
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

async fn existing_session(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<Session>, ApiError> {
    let Some(id) = session_cookie(headers) else {
        return Ok(None);
    };
    let now = state.clock.now();
    let lookup = id.clone();
    let record = state
        .db
        .read(move |conn| Box::pin(async move { sign_in::session(conn, &lookup, now).await }))
        .await?;
    Ok(record.map(|record| Session {
        id,
        record,
        fresh: false,
    }))
}

async fn new_session(state: &AppState) -> Result<Session, ApiError> {
    let now = state.clock.now();
    let opened = state
        .db
        .write(move |conn| Box::pin(async move { sign_in::open_session(conn, None, now).await }))
        .await?;
    Ok(Session::opened(opened))
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
        .map_err(|e| ApiError::from(e).into_response())?;
    outcome.map_err(|error| match error {
        AuthorizeError::Page(why) => error_page(state, StatusCode::BAD_REQUEST, &why),
        AuthorizeError::Redirect { url, .. } => redirect(&url),
    })
}

async fn authorize(State(state): State<AppState>, uri: Uri, headers: HeaderMap) -> Response {
    let authorization = match validate(&state, &uri).await {
        Ok(a) => a,
        Err(response) => return response,
    };
    let session = match existing_session(&state, &headers).await {
        Ok(Some(session)) => session,
        Ok(None) => match new_session(&state).await {
            Ok(session) => session,
            Err(e) => return e.into_response(),
        },
        Err(e) => return e.into_response(),
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
        Err(e) => return ApiError::from(e).into_response(),
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
        Err(e) => ApiError::from(e).into_response(),
    }
}

fn action(uri: &Uri) -> String {
    escape(&format!("{AUTHORIZE_PATH}?{}", uri.query().unwrap_or("")))
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
    let error = error.map_or(String::new(), |e| {
        format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e))
    });
    page(
        state,
        status,
        t(l, "Inloggen", "Se connecter"),
        &format!(
            "<h1>{title}</h1><p class=\"lead\">{lead} <span class=\"client\">{client}</span>.</p>{error}\
             <form method=\"post\" action=\"{action}\">\
             <input type=\"hidden\" name=\"csrf_token\" value=\"{csrf}\">\
             <label for=\"username\">{email}</label>\
             <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username\" required autofocus>\
             <label for=\"password\">{password}</label>\
             <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required>\
             <button type=\"submit\">{submit}</button></form>\
             <p class=\"fine\">{fine}</p>",
            title = t(l, "Inloggen bij Souk", "Se connecter à Souk"),
            lead = t(
                l,
                "Log in om verder te gaan naar",
                "Connectez-vous pour continuer vers"
            ),
            client = escape(&authorization.client.name),
            action = action(uri),
            csrf = escape(&session.record.csrf_token),
            email = t(l, "E-mailadres", "Adresse e-mail"),
            password = t(l, "Wachtwoord", "Mot de passe"),
            submit = t(l, "Inloggen", "Se connecter"),
            fine = t(
                l,
                "Je wachtwoord gaat alleen naar Souk, nooit naar de toepassing.",
                "Votre mot de passe n'est envoyé qu'à Souk, jamais à l'application.",
            ),
        ),
    )
}

fn consent_page(
    state: &AppState,
    authorization: &Authorization,
    session: &Session,
    uri: &Uri,
) -> Response {
    let l = state.config.region.language();
    let scopes: String = authorization
        .scopes
        .iter()
        .map(|s| format!("<li>{}</li>", escape(s.describe(l == Language::Dutch))))
        .collect();
    page(
        state,
        StatusCode::OK,
        t(l, "Toestemming geven", "Donner l'autorisation"),
        &format!(
            "<h1>{title}</h1><p class=\"lead\"><span class=\"client\">{client}</span> {asks}</p>\
             <ul class=\"scopes\">{scopes}</ul>\
             <form method=\"post\" action=\"{action}\">\
             <input type=\"hidden\" name=\"csrf_token\" value=\"{csrf}\">\
             <button type=\"submit\" name=\"decision\" value=\"allow\">{allow}</button>\
             <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">{deny}</button>\
             </form><p class=\"fine\">{fine}</p>",
            title = t(l, "Toegang verlenen?", "Autoriser l'accès ?"),
            client = escape(&authorization.client.name),
            asks = t(l, "wil namens jou:", "souhaite, en votre nom :"),
            action = action(uri),
            csrf = escape(&session.record.csrf_token),
            allow = t(l, "Toestaan", "Autoriser"),
            deny = t(l, "Weigeren", "Refuser"),
            fine = t(
                l,
                "Je kunt deze toegang later weer intrekken.",
                "Vous pourrez retirer cet accès plus tard.",
            ),
        ),
    )
}

async fn submit(
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
    let form: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let l = state.config.region.language();
    let session = match existing_session(&state, &headers).await {
        Ok(session) => session,
        Err(e) => return e.into_response(),
    };
    // The CSRF token must come with the session it was issued to.
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
    let address = peer.ip().to_string();
    let now = state.clock.now();
    let outcome = sign_in::sign_in(&state.db, &username, password, &address, now).await;
    match outcome {
        Err(e) => ApiError::from(e).into_response(),
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

async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLESHEET,
    )
        .into_response()
}

fn query_param(uri: &Uri, name: &str) -> Option<String> {
    uri.query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    })
}

/// Shows a button rather than confirming on GET: mail scanners that follow links must not
/// confirm on the owner's behalf.
async fn confirm_page(State(state): State<AppState>, uri: Uri) -> Response {
    let l = state.config.region.language();
    let Some(token) = query_param(&uri, "token") else {
        return error_page(
            &state,
            StatusCode::BAD_REQUEST,
            t(l, "Deze link is onvolledig.", "Ce lien est incomplet."),
        );
    };
    let hash = secret::hash(&token);
    let needs_password = state
        .db
        .read(move |conn| Box::pin(async move { accounts::link_wants_password(conn, &hash).await }))
        .await;
    let needs_password = match needs_password {
        Ok(needed) => needed,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let password = if needs_password {
        format!(
            "<label for=\"password\">{}</label>\
             <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"new-password\" minlength=\"8\" required>",
            t(
                l,
                "Kies een wachtwoord (minstens 8 tekens)",
                "Choisissez un mot de passe (au moins 8 caractères)"
            )
        )
    } else {
        String::new()
    };
    page(
        &state,
        StatusCode::OK,
        t(l, "Bevestigen", "Confirmer"),
        &format!(
            "<h1>{title}</h1><p class=\"lead\">{lead}</p>\
             <form method=\"post\" action=\"/accounts/confirm\">\
             <input type=\"hidden\" name=\"token\" value=\"{token}\">{password}\
             <button type=\"submit\">{button}</button></form>",
            title = t(l, "Bijna klaar", "Presque terminé"),
            lead = t(
                l,
                "Bevestig je e-mailadres voor Souk.",
                "Confirmez votre adresse e-mail pour Souk."
            ),
            token = escape(&token),
            button = t(l, "Bevestigen", "Confirmer"),
        ),
    )
}

async fn confirm(State(state): State<AppState>, body: Bytes) -> Response {
    let l = state.config.region.language();
    let form: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let Some(token) = field("token") else {
        return error_page(
            &state,
            StatusCode::BAD_REQUEST,
            t(l, "Deze link is onvolledig.", "Ce lien est incomplet."),
        );
    };
    let new_password = match field("password").filter(|p| !p.is_empty()) {
        Some(p) if p.chars().count() < crate::domain::user::PASSWORD_MIN => {
            return error_page(
                &state,
                StatusCode::BAD_REQUEST,
                t(
                    l,
                    "Het wachtwoord is te kort.",
                    "Le mot de passe est trop court.",
                ),
            );
        }
        Some(p) => Some(password::hash(p).await),
        None => None,
    };
    let now = state.clock.now();
    let hash = secret::hash(&token);
    let outcome = state
        .db
        .write(move |conn| {
            Box::pin(async move { accounts::confirm(conn, &hash, new_password, now).await })
        })
        .await;
    match outcome {
        Ok(Some(_)) => page(
            &state,
            StatusCode::OK,
            t(l, "Bevestigd", "Confirmé"),
            &format!(
                "<h1>{}</h1><p class=\"lead\">{}</p>",
                t(l, "Bevestigd", "Confirmé"),
                t(
                    l,
                    "Dank je! Je kunt dit venster sluiten.",
                    "Merci ! Vous pouvez fermer cette fenêtre."
                ),
            ),
        ),
        Ok(None) => error_page(
            &state,
            StatusCode::BAD_REQUEST,
            t(
                l,
                "Deze link is onbekend, al gebruikt of verlopen.",
                "Ce lien est inconnu, déjà utilisé ou expiré.",
            ),
        ),
        Err(usecase::Error::Conflict(Conflict::EmailTaken)) => error_page(
            &state,
            StatusCode::CONFLICT,
            t(
                l,
                "Dit e-mailadres is intussen door een ander account in gebruik genomen.",
                "Cette adresse e-mail est entre-temps utilisée par un autre compte.",
            ),
        ),
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// The demo client's redirect target in a sandbox: shows the code and the curl line that
/// exchanges it, so a newcomer gets a user token without writing a client first.
async fn demo_callback(State(state): State<AppState>, uri: Uri) -> Response {
    if state.config.environment != crate::config::Environment::Sandbox {
        return ApiError::new(crate::error::ErrorCode::NotFound).into_response();
    }
    let l = state.config.region.language();
    let Some(code) = query_param(&uri, "code") else {
        let error = query_param(&uri, "error").unwrap_or_else(|| "?".into());
        return error_page(&state, StatusCode::OK, &error);
    };
    let auth = &state.config.auth_url;
    let callback = format!("{auth}/accounts/demo-callback");
    let curl = format!(
        "curl -s -u \"$CLIENT_ID:$CLIENT_SECRET\" -d grant_type=authorization_code \\\n  -d code={code} \\\n  --data-urlencode redirect_uri={callback} \\\n  {auth}/accounts/oauth/token"
    );
    page(
        &state,
        StatusCode::OK,
        "Code",
        &format!(
            "<h1>{title}</h1><p class=\"lead\">{lead}</p><p><code id=\"code\">{code}</code></p>\
             <p class=\"fine\">{within}</p><pre>{curl}</pre>",
            title = t(l, "Gelukt", "Réussi"),
            lead = t(
                l,
                "De autorisatiecode voor de demo-app:",
                "Le code d'autorisation de l'application de démonstration :"
            ),
            code = escape(&code),
            within = t(
                l,
                "Wissel hem binnen 60 seconden in (CLIENT_ID en CLIENT_SECRET staan in data/sandbox.txt):",
                "Échangez-le dans les 60 secondes (CLIENT_ID et CLIENT_SECRET se trouvent dans data/sandbox.txt) :"
            ),
            curl = escape(&curl),
        ),
    )
}
