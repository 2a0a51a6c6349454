//! The sandbox's demo client lands here with its code.

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use maud::html;

use crate::error::ApiError;
use crate::oauth::secret::is_base64url;
use crate::state::AppState;

use super::{error_page, page, query_param, t};

/// The demo client's redirect target in a sandbox: shows the code and the curl line that
/// exchanges it, so a newcomer gets a user token without writing a client first.
pub(super) async fn demo_callback(State(state): State<AppState>, uri: Uri) -> Response {
    if state.config.environment != crate::config::Environment::Sandbox {
        return ApiError::new(crate::error::ErrorCode::NotFound).into_response();
    }
    let l = state.config.region.language();
    let Some(code) = query_param(&uri, "code") else {
        let error = query_param(&uri, "error").unwrap_or_else(|| "?".into());
        return error_page(&state, StatusCode::OK, &error);
    };
    // The page builds a shell command around the code for the reader to paste: anything
    // but the characters Souk's codes are made of (base64url) is no code of Souk's.
    if code.is_empty() || !is_base64url(&code) {
        return error_page(&state, StatusCode::BAD_REQUEST, "invalid_request");
    }
    let auth = &state.config.auth_url;
    let callback = format!("{auth}/accounts/demo-callback");
    let curl = format!(
        "curl -s -u \"$CLIENT_ID:$CLIENT_SECRET\" -d grant_type=authorization_code \\\n  -d code={code} \\\n  --data-urlencode redirect_uri={callback} \\\n  {auth}/accounts/oauth/token"
    );
    page(
        &state,
        StatusCode::OK,
        "Code",
        html! {
            h1 { (t(l, "Gelukt", "Réussi")) }
            p class="lead" {
                (t(
                    l,
                    "De autorisatiecode voor de demo-app:",
                    "Le code d'autorisation de l'application de démonstration :",
                ))
            }
            p { code id="code" { (code) } }
            p class="fine" {
                (t(
                    l,
                    "Wissel hem binnen 60 seconden in (CLIENT_ID en CLIENT_SECRET staan in data/sandbox.txt):",
                    "Échangez-le dans les 60 secondes (CLIENT_ID et CLIENT_SECRET se trouvent dans data/sandbox.txt) :",
                ))
            }
            pre { (curl) }
        },
    )
}
