//! The page behind a mailed confirmation link: a button (and a password form where the
//! account has none), and the answer to it.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use maud::html;

use crate::error::ApiError;
use crate::oauth::{password, secret};
use crate::state::AppState;
use crate::usecase::{self, Conflict, accounts};

use super::{Form, error_page, heading, page, query_param, t};

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
    let needs_password = state
        .db
        .read(move |conn| Box::pin(async move { accounts::link_wants_password(conn, &hash).await }))
        .await;
    let needs_password = match needs_password {
        Ok(needed) => needed,
        Err(e) => return ApiError::from(e).into_response(),
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
