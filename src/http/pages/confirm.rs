//! The page behind a mailed confirmation link: a button (and a password form where the
//! account has none), and the answer to it.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use maud::html;

use crate::oauth::{password, secret};
use crate::state::AppState;
use crate::usecase::{self, Conflict, accounts};

use super::{Form, error_page, failure_page, heading, page, query_param, t};

/// Shows a button rather than confirming on GET: mail scanners that follow links must not
/// confirm on the owner's behalf.
pub(super) async fn confirm_page(State(state): State<AppState>, uri: Uri) -> Response {
    let l = state.config.region.language();
    let Some(token) = query_param(&uri, "token") else {
        return error_page(
            &state,
            StatusCode::BAD_REQUEST,
            t(l, "Deze link is onvolledig.", "Ce lien est incomplet."),
        );
    };
    let hash = secret::hash(&token);
    let now = state.clock.now();
    let needs_password = state
        .db
        .read(move |conn| {
            Box::pin(async move { accounts::link_wants_password(conn, &hash, now).await })
        })
        .await;
    let needs_password = match needs_password {
        Ok(needed) => needed,
        Err(e) => return failure_page(&state, e),
    };
    page(
        &state,
        StatusCode::OK,
        t(l, "Bevestigen", "Confirmer"),
        html! {
            (heading(
                t(l, "Bijna klaar", "Presque terminé"),
                t(l, "Bevestig je e-mailadres voor Souk.", "Confirmez votre adresse e-mail pour Souk."),
            ))
            form method="post" action="/accounts/confirm" {
                input type="hidden" name="token" value=(token);
                @if needs_password {
                    label for="password" {
                        (t(
                            l,
                            "Kies een wachtwoord (minstens 8 tekens)",
                            "Choisissez un mot de passe (au moins 8 caractères)",
                        ))
                    }
                    input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required;
                }
                button type="submit" { (t(l, "Bevestigen", "Confirmer")) }
            }
        },
    )
}

/// Why the page refuses a chosen password, if it does (as `domain::user`'s rule).
fn password_refusal(l: crate::domain::locale::Language, password: &str) -> Option<&'static str> {
    use crate::domain::user::{PASSWORD_MAX, PASSWORD_MIN};
    if password.chars().count() < PASSWORD_MIN {
        Some(t(
            l,
            "Het wachtwoord is te kort.",
            "Le mot de passe est trop court.",
        ))
    } else if password.len() > PASSWORD_MAX {
        Some(t(
            l,
            "Het wachtwoord is te lang.",
            "Le mot de passe est trop long.",
        ))
    } else {
        None
    }
}

pub(super) async fn confirm(State(state): State<AppState>, body: Bytes) -> Response {
    let l = state.config.region.language();
    let form = Form::parse(&body);
    let field = |name: &str| form.field(name);
    let Some(token) = field("token") else {
        return error_page(
            &state,
            StatusCode::BAD_REQUEST,
            t(l, "Deze link is onvolledig.", "Ce lien est incomplet."),
        );
    };
    let password = field("password").filter(|p| !p.is_empty());
    if let Some(refusal) = password.as_deref().and_then(|p| password_refusal(l, p)) {
        return error_page(&state, StatusCode::BAD_REQUEST, refusal);
    }
    let hash = secret::hash(&token);
    // Hashing a password costs a slot of the sign-in's hashing (`password::hash`): only
    // for a link that takes one, never for anyone who posts a made-up token.
    let new_password = match password {
        Some(p) => {
            let (link, now) = (hash.clone(), state.clock.now());
            let wanted = state
                .db
                .read(move |conn| {
                    Box::pin(async move { accounts::link_wants_password(conn, &link, now).await })
                })
                .await;
            match wanted {
                Ok(true) => Some(password::hash(p).await),
                Ok(false) => None,
                Err(e) => return failure_page(&state, e),
            }
        }
        None => None,
    };
    let now = state.clock.now();
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
            heading(
                t(l, "Bevestigd", "Confirmé"),
                t(
                    l,
                    "Dank je! Je kunt dit venster sluiten.",
                    "Merci ! Vous pouvez fermer cette fenêtre.",
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
        // An account without a password must choose one: the form came without it.
        Err(usecase::Error::Invalid(_)) => error_page(
            &state,
            StatusCode::BAD_REQUEST,
            t(
                l,
                "Kies een wachtwoord om je account te bevestigen.",
                "Choisissez un mot de passe pour confirmer votre compte.",
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
        Err(e) => failure_page(&state, e),
    }
}
