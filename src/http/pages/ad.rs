//! The advertisement's page on the website: where `svc:advertisement-website-link` and the
//! mailed links (bids, saved-search alerts) lead. Anyone may read it, without a token; it
//! shows an online ad as a person sees it, in the ad's language, and is not found otherwise.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use maud::{Markup, html};

use crate::domain::advertisement::ItemId;
use crate::domain::advertisement::{ModelType, PriceModel};
use crate::domain::locale::{Language, euros};
use crate::domain::time::Timestamp;
use crate::state::AppState;
use crate::usecase;
use crate::usecase::advertisements::{self, Reader};

use super::{failure_page, page_in, t};

/// Anything but an online ad's itemId (a path that is not even UTF-8 included) is a page
/// not found.
pub(super) async fn ad_page(
    State(state): State<AppState>,
    method: Method,
    item: Result<Path<String>, PathRejection>,
) -> Response {
    let Some(item) = item.ok().and_then(|Path(item)| ItemId::parse(&item)) else {
        return not_found(&state);
    };
    let now = state.clock.now();
    let anyone = Reader {
        user: None,
        private: false,
    };
    let shown = state
        .db
        .read(move |conn| Box::pin(advertisements::read(conn, item, anyone, now)))
        .await;
    let shown = match shown {
        Ok(shown) => shown,
        Err(usecase::Error::NotFound(_)) => return not_found(&state),
        Err(e) => return failure_page(&state, e),
    };
    // A HEAD (a link checker, a mail scanner's probe) shows no one the ad.
    if method == Method::GET {
        state.views.record(shown.record.number);
    }
    let record = &shown.record;
    let l = record.locale.language();
    // Place, seller (whose name may be empty) and day placed.
    let mut facts = vec![record.city_name.clone().unwrap_or(record.postcode.clone())];
    if !record.seller_name.is_empty() {
        facts.push(record.seller_name.clone());
    }
    if let Some(start) = record.start_date {
        facts.push(format!(
            "{}{}",
            t(l, "geplaatst op ", "publiée le "),
            day(start)
        ));
    }
    page_in(
        l,
        StatusCode::OK,
        &record.title,
        html! {
            h1 { (record.title) }
            p class="price" { (price(l, &record.price_model)) }
            p class="fine" { (facts.join(" · ")) }
            @for paragraph in record.description.split("\n\n") {
                p class="description" { (paragraph) }
            }
        },
    )
}

fn not_found(state: &AppState) -> Response {
    let l = state.config.region.language();
    let title = t(l, "Advertentie niet gevonden", "Annonce introuvable");
    page_in(
        l,
        StatusCode::NOT_FOUND,
        title,
        html! {
            h1 { (title) }
            p class="lead" {
                (t(
                    l,
                    "Deze advertentie bestaat niet of staat niet meer online.",
                    "Cette annonce n'existe pas ou n'est plus en ligne.",
                ))
            }
        },
    )
}

/// The price as a person reads it: the amount, or what the model says instead of one.
fn price(l: Language, stored: &str) -> Markup {
    let model = serde_json::from_str(stored)
        .ok()
        .and_then(|value| PriceModel::parse(Some(&value)).ok());
    let Some(model) = model else {
        return html! {};
    };
    let amount = model.asking_price.map(|cents| euros(l, cents));
    html! {
        @match model.model_type {
            ModelType::Fixed | ModelType::BuyItNow => (amount.unwrap_or_default()),
            ModelType::Bidding => {
                (t(l, "Bieden", "Enchères"))
                @if let Some(least) = model.minimal_bid {
                    (t(l, " vanaf ", " à partir de ")) (euros(l, least))
                }
            }
            ModelType::ToBeDiscussed => (t(l, "N.o.t.k.", "À discuter")),
            ModelType::ByRequest => (t(l, "Op aanvraag", "Sur demande")),
            ModelType::Trade => (t(l, "Ruilen", "À échanger")),
            ModelType::SeeDescription => (t(l, "Zie omschrijving", "Voir la description")),
            ModelType::Reserved => (t(l, "Gereserveerd", "Réservé")),
        }
    }
}

/// The day of a timestamp, `YYYY-MM-DD`.
fn day(at: i64) -> String {
    Timestamp(at).to_string()[..10].to_owned()
}
