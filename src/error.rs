//! The one error type of the resource API and its catalogue of codes (api.md §2).
//!
//! Handlers return `Err(ApiError)`; the response carries the error as an extension and the
//! render middleware (`http::render`) writes the body with the request's id as `logref`, so
//! that every error, including the router's own 404 and 405, has the documented shape.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use std::convert::Infallible;

use crate::domain::field_error::FieldError;
use crate::domain::locale::{Language, Text};
use crate::store::DbError;
use crate::usecase::{self, Conflict, PurchaseRefusal, Thing, UploadRefusal};

macro_rules! error_codes {
    ($( $variant:ident = ($status:literal, $code:literal, $nl:literal, $fr:literal, $doc:literal); )+) => {
        /// Every error code Souk answers with; `/docs/errors/{code}` documents each.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($variant),+ }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::from_u16($status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)),+ }
            }

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code),+ }
            }

            pub fn message(self, language: Language) -> &'static str {
                match (self, language) {
                    $((ErrorCode::$variant, Language::Dutch) => $nl, (ErrorCode::$variant, Language::French) => $fr,)+
                }
            }

            /// What the code means and what a client should do (the documentation page).
            pub fn documentation(self) -> &'static str {
                match self { $(ErrorCode::$variant => $doc),+ }
            }
        }
    };
}

error_codes! {
    ValidationFailure = (400, "validation-failure", "Validatie mislukt", "La validation a échoué",
        "The request is well-formed but some values are not acceptable. `details` lists every problem at once (the first 100), each with the `field` (or `fields`) at fault, a `code` and a `message`; fix them all and send again.");
    InvalidJson = (400, "invalid-json", "De body is geen geldige JSON", "Le corps n'est pas du JSON valide",
        "The request body could not be parsed as JSON (or is not of the shape the endpoint takes). The message names the line and column where parsing stopped.");
    IncorrectContentType = (400, "incorrect-content-type", "Onjuist content-type", "Type de contenu incorrect",
        "The request has a body, but its `Content-Type` is not the one the endpoint takes (usually `application/json`; JSON Patch takes `application/json-patch+json`).");
    PaginationInvalid = (400, "pagination-invalid", "Ongeldige paginering", "Pagination invalide",
        "`offset` or `limit` is out of range for this collection. The field error names the parameter; each collection documents its default and maximum `limit`.");
    InvalidItemId = (400, "invalid-item-id", "Ongeldig advertentienummer", "Numéro d'annonce invalide",
        "An `itemId` in the request body is not of the form `m` followed by digits.");
    InvalidExpiration = (400, "invalid-expiration", "Ongeldige einddatum", "Date d'expiration invalide",
        "The advertisement cannot be renewed now: renewal is allowed in the last 7 days before its `closeDate` and, once it expired, for 30 days after it.");
    ExtensionNotSupported = (400, "extension-not-supported", "Verlengen is niet mogelijk", "La prolongation n'est pas possible",
        "The advertisement cannot be renewed now (renewal is allowed in the last 7 days before its `closeDate`).");
    FeatureNotAllowed = (400, "feature-not-allowed", "Deze feature is niet toegestaan", "Cette option n'est pas autorisée",
        "The feature cannot be bought for this advertisement.");
    InvalidFeatureType = (400, "invalid-feature-type", "Onbekend featuretype", "Type d'option inconnu",
        "The feature name is not one of the features Souk sells.");
    InvalidOrderState = (400, "invalid-order-state", "De order heeft een ongeldige status", "La commande a un état invalide",
        "The order named in the request cannot take more products in its present state.");
    UnknownOrder = (400, "unknown-order", "Onbekende order", "Commande inconnue",
        "The `orderId` in the request body names no order.");
    EmailChangeNotAllowed = (400, "email-change-not-allowed", "E-mailadres wijzigen is niet toegestaan", "Le changement d'adresse e-mail n'est pas autorisé",
        "The e-mail address of this account cannot be changed now.");
    InvalidRequest = (400, "invalid-request", "Ongeldig verzoek", "Requête invalide",
        "The request is malformed in a way no other code describes, for example an access token given both in the `Authorization` header and in the query string.");
    Unauthenticated = (401, "unauthenticated", "Niet geauthenticeerd", "Non authentifié",
        "The request has no access token, or an unknown, expired or revoked one. Get a token from the authorization server (or refresh it) and send it as `Authorization: Bearer <token>`. The `WWW-Authenticate` header says what was wrong.");
    Unauthorized = (403, "unauthorized", "Geen toegang", "Accès refusé",
        "The token is valid but may not do this: a missing scope, a client token on a user's resource, or another user's resource.");
    UserNotConfirmed = (403, "user-not-confirmed", "Het account is nog niet bevestigd", "Le compte n'est pas encore confirmé",
        "The user has not yet confirmed the account through the link mailed to them; an unconfirmed user can sign in and read, but not publish or bid.");
    AdvertisementNotFound = (404, "advertisement-not-found", "Advertentie niet gevonden", "Annonce introuvable",
        "No advertisement has this `itemId`, or it is not visible to the caller.");
    BidNotFound = (404, "bid-not-found", "Bod niet gevonden", "Offre introuvable",
        "No bid has this id on this advertisement (or it was withdrawn).");
    CategoryNotFound = (404, "category-not-found", "Categorie niet gevonden", "Catégorie introuvable",
        "No category has this id, or the L2 category is not a child of the given L1 category.");
    FeatureNotFound = (404, "feature-not-found", "Feature niet gevonden", "Option introuvable",
        "No feature of this name exists for the advertisement.");
    TransactionNotFound = (404, "transaction-not-found", "Transactie niet gevonden", "Transaction introuvable",
        "The advertisement has no transaction with this id.");
    SavedsearchNotFound = (404, "savedsearch-not-found", "Zoekopdracht niet gevonden", "Recherche introuvable",
        "No saved search of this user has this id.");
    ReviewNotFound = (404, "review-not-found", "Beoordeling niet gevonden", "Avis introuvable",
        "The user has no review with this id.");
    LocationNotFound = (404, "location-not-found", "Locatie niet gevonden", "Lieu introuvable",
        "Souk knows no location with this postcode.");
    UserNotFound = (404, "user-not-found", "Gebruiker niet gevonden", "Utilisateur introuvable",
        "No user has this id.");
    OrderNotFound = (404, "order-not-found", "Order niet gevonden", "Commande introuvable",
        "No order of the caller has this id.");
    ImageNotFound = (404, "image-not-found", "Afbeelding niet gevonden", "Image introuvable",
        "No image has this media id (or rendition size).");
    HookNotFound = (404, "hook-not-found", "Webhook niet gevonden", "Webhook introuvable",
        "The calling client has no webhook with this id.");
    EventNotFound = (404, "event-not-found", "Event niet gevonden", "Événement introuvable",
        "No event with this id is visible to the calling client.");
    NotFound = (404, "not-found", "Niet gevonden", "Introuvable",
        "No resource lives at this address. Check the path against the API reference; every resource exists under `/v1` and `/v2`.");
    MethodNotAllowed = (405, "method-not-allowed", "Methode niet toegestaan", "Méthode non autorisée",
        "The resource exists but does not answer this HTTP method. The `Allow` header lists the methods it does answer.");
    RequestTimeout = (408, "request-timeout", "Het verzoek duurde te lang", "La requête a pris trop de temps",
        "The server gave up on the request after its time limit. Retrying is safe for GET, and for POST with an `Idempotency-Key`.");
    ConflictingState = (409, "conflicting-state", "Conflicterende status", "État conflictuel",
        "The resource is not in a state that allows this change (for example an illegal status transition).");
    ImageNotReady = (409, "image-not-ready", "De afbeelding wordt nog verwerkt", "L'image est encore en cours de traitement",
        "The image's renditions are still being made (its `status` is `processing`). Try again in a moment; its `status` turns `available` when they exist.");
    PreconditionFailed = (412, "precondition-failed", "Voorwaarde niet vervuld", "La condition préalable a échoué",
        "The `If-Match` header does not match the resource's current `ETag`: someone changed it since you read it. Read it again and reapply your change.");
    PayloadTooLarge = (413, "payload-too-large", "De body is te groot", "Le corps est trop volumineux",
        "The request body is larger than the server accepts.");
    UnsupportedMediaType = (415, "unsupported-media-type", "Mediatype niet ondersteund", "Type de média non pris en charge",
        "The uploaded content is of a type this endpoint does not take (for example an image format Souk cannot read).");
    IdempotencyKeyReused = (422, "idempotency-key-reused", "Idempotency-Key is al gebruikt voor een ander verzoek", "La clé d'idempotence a déjà servi pour une autre requête",
        "The `Idempotency-Key` was used within the last 24 hours with a different request body. Use a new key for a new request.");
    RateLimitExceeded = (429, "rate-limit-exceeded", "Te veel verzoeken", "Trop de requêtes",
        "Too many requests in a short time. Wait for the number of seconds in `Retry-After`.");
    InternalServerError = (500, "internal-server-error", "Interne serverfout", "Erreur interne du serveur",
        "Something failed inside Souk. Nothing in the body explains it to protect the server; quote the `logref` when you report it, the operator finds the cause in the logs under that id.");
    ServiceUnavailable = (503, "service-unavailable", "De dienst is tijdelijk niet beschikbaar", "Le service est temporairement indisponible",
        "Souk cannot reach its database right now, or another request changed the same records at that moment and this one was undone. Nothing was changed: send the request again after a short wait (`Retry-After`, where present, says how long).");
    OutcomeUnknown = (503, "outcome-unknown", "Onbekend of de wijziging is doorgevoerd", "On ne sait pas si la modification a été faite",
        "The connection to the database was lost as the change was being saved, and the database could not be asked since whether it was: the change may have been made. Look (read the resource, or the list it belongs to) before sending the request again. Under the same `Idempotency-Key` its retries get this answer, and it is not run again (unless the database stayed out of reach for seconds more, when the key could not keep the answer).");
}

impl ErrorCode {
    pub fn parse(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == text)
    }

    /// The code for a bare status answered by the router or a middleware layer.
    pub fn for_status(status: StatusCode) -> ErrorCode {
        match status.as_u16() {
            400 => ErrorCode::InvalidRequest,
            401 => ErrorCode::Unauthenticated,
            403 => ErrorCode::Unauthorized,
            404 => ErrorCode::NotFound,
            405 => ErrorCode::MethodNotAllowed,
            408 => ErrorCode::RequestTimeout,
            412 => ErrorCode::PreconditionFailed,
            413 => ErrorCode::PayloadTooLarge,
            415 => ErrorCode::UnsupportedMediaType,
            429 => ErrorCode::RateLimitExceeded,
            503 => ErrorCode::ServiceUnavailable,
            _ => ErrorCode::InternalServerError,
        }
    }
}

/// A field error as it appears in `details`.
fn field_error_json(error: &FieldError, language: Language) -> Value {
    let mut body = serde_json::Map::new();
    match error.fields.as_slice() {
        [one] => body.insert("field".into(), json!(one)),
        many => body.insert("fields".into(), json!(many)),
    };
    body.insert("code".into(), json!(error.code));
    body.insert("message".into(), json!(error.message.get(language)));
    if let Some(value) = &error.value {
        body.insert("value".into(), value.clone());
    }
    Value::Object(body)
}

/// An error answer of the resource API.
#[derive(Clone, Debug)]
pub struct ApiError {
    pub code: ErrorCode,
    /// Replaces the code's standard message when set.
    pub message: Option<Text>,
    pub details: Vec<FieldError>,
    /// Extra response headers (`WWW-Authenticate`, `Allow`, `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
}

impl ApiError {
    pub fn new(code: ErrorCode) -> Self {
        ApiError {
            code,
            message: None,
            details: Vec::new(),
            headers: Vec::new(),
        }
    }

    pub fn with_message(mut self, message: Text) -> Self {
        self.message = Some(message);
        self
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn with_details(mut self, details: Vec<FieldError>) -> Self {
        self.details = details;
        self
    }

    /// 400 `validation-failure` with the given field errors.
    pub fn validation(details: Vec<FieldError>) -> Self {
        ApiError {
            details,
            ..ApiError::new(ErrorCode::ValidationFailure)
        }
    }

    /// A server-side failure: logged with its cause, answered without it.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(cause = %cause, "internal error");
        ApiError::new(ErrorCode::InternalServerError)
    }

    /// The body of api.md §2.
    pub fn body(&self, logref: &str, language: Language) -> Value {
        let mut body = json!({
            "_links": {"help": {"href": format!("/docs/errors/{}", self.code.as_str())}},
            "logref": logref,
            "statuscode": self.code.status().as_u16(),
            "code": self.code.as_str(),
            "message": self.message.as_ref().map_or(self.code.message(language), |m| m.get(language)),
        });
        if !self.details.is_empty() {
            body["details"] = self
                .details
                .iter()
                .take(DETAILS_MOST)
                .map(|d| field_error_json(d, language))
                .collect();
        }
        body
    }
}

/// The most field errors one answer lists: a body of garbage (a list of half a million
/// bad items fits in a megabyte) must not be answered with tens of megabytes. No request a
/// client means to send has so many problems.
pub const DETAILS_MOST: usize = 100;

impl From<ErrorCode> for ApiError {
    fn from(code: ErrorCode) -> Self {
        ApiError::new(code)
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Unavailable(cause) => {
                tracing::error!(cause = %cause, "database unavailable");
                ApiError::new(ErrorCode::ServiceUnavailable)
            }
            DbError::Contention(cause) => {
                // Two requests met (on PostgreSQL, a deadlock): the one undone changed
                // nothing, so its client may send it again at once.
                tracing::warn!(cause = %cause, "transaction undone by a conflicting one");
                ApiError::new(ErrorCode::ServiceUnavailable)
                    .with_message(Text::new(
                        "Een gelijktijdige wijziging ging voor; er is niets gewijzigd. Probeer het opnieuw.",
                        "Une modification simultanée est passée avant; rien n'a été modifié. Réessayez.",
                    ))
                    .with_header("Retry-After", "1")
            }
            DbError::OutcomeUnknown(cause) => {
                // Not "nothing changed": the client must look before it sends it again.
                tracing::error!(cause = %cause, "a write's outcome is unknown");
                ApiError::new(ErrorCode::OutcomeUnknown)
            }
            other => ApiError::internal(other),
        }
    }
}

impl From<Infallible> for ApiError {
    fn from(never: Infallible) -> Self {
        match never {}
    }
}

/// A use case's refusal as the API answers it; the caller's own refusal of the request
/// (`Error::Request`) is already one.
impl<R: Into<ApiError>> From<usecase::Error<R>> for ApiError {
    fn from(e: usecase::Error<R>) -> Self {
        use usecase::Error;
        match e {
            Error::Request(e) => e.into(),
            Error::NotFound(Thing::Advertisement) => ErrorCode::AdvertisementNotFound.into(),
            Error::NotFound(Thing::Transaction) => ErrorCode::TransactionNotFound.into(),
            Error::NotFound(Thing::User) => ErrorCode::UserNotFound.into(),
            Error::NotFound(Thing::Image) => ErrorCode::ImageNotFound.into(),
            Error::NotFound(Thing::SavedSearch) => ErrorCode::SavedsearchNotFound.into(),
            Error::NotFound(Thing::Bid) => ErrorCode::BidNotFound.into(),
            Error::NotFound(Thing::Review) => ErrorCode::ReviewNotFound.into(),
            Error::NotFound(Thing::Order) => ErrorCode::OrderNotFound.into(),
            Error::NotFound(Thing::Feature) => ErrorCode::FeatureNotFound.into(),
            Error::NotFound(Thing::Hook) => ErrorCode::HookNotFound.into(),
            Error::NotFound(Thing::Event) => ErrorCode::EventNotFound.into(),
            Error::Forbidden => ErrorCode::Unauthorized.into(),
            Error::NotConfirmed => ErrorCode::UserNotConfirmed.into(),
            Error::Invalid(details) => ApiError::validation(details),
            Error::Conflict(conflict) => {
                ApiError::new(ErrorCode::ConflictingState).with_message(conflict_message(conflict))
            }
            Error::Changed => ErrorCode::PreconditionFailed.into(),
            Error::Upload(refusal, details) => {
                let code = match refusal {
                    UploadRefusal::TooLarge => ErrorCode::PayloadTooLarge,
                    UploadRefusal::Unsupported => ErrorCode::UnsupportedMediaType,
                    UploadRefusal::Invalid => ErrorCode::ValidationFailure,
                };
                ApiError::new(code).with_details(details)
            }
            Error::Purchase(refusal) => ApiError::new(match refusal {
                PurchaseRefusal::NotRenewable => ErrorCode::InvalidExpiration,
                PurchaseRefusal::UnknownOrder => ErrorCode::UnknownOrder,
                PurchaseRefusal::OrderNotOpen => ErrorCode::InvalidOrderState,
                PurchaseRefusal::UnknownFeature => ErrorCode::InvalidFeatureType,
                PurchaseRefusal::FeatureNotAllowed => ErrorCode::FeatureNotAllowed,
            }),
            Error::Db(e) => e.into(),
        }
    }
}

fn conflict_message(conflict: Conflict) -> Text {
    match conflict {
        Conflict::Transition { from, to } => Text::new(
            format!(
                "Van `{}` naar `{}` is geen toegestane overgang",
                from.as_str(),
                to.as_str()
            ),
            format!(
                "Passer de `{}` à `{}` n'est pas permis",
                from.as_str(),
                to.as_str()
            ),
        ),
        Conflict::Finished(status) => Text::new(
            format!("De transactie is al {}", status.as_str()),
            format!("La transaction est déjà {}", status.as_str()),
        ),
        Conflict::EmailTaken => Text::new(
            "Dit e-mailadres is intussen door een ander account in gebruik genomen",
            "Cette adresse e-mail est entre-temps utilisée par un autre compte",
        ),
        Conflict::NotCompleted(status) => Text::new(
            format!(
                "Alleen een voltooide (COMPLETED) transactie kan beoordeeld worden; deze is {}",
                status.as_str()
            ),
            format!(
                "Seule une transaction terminée (COMPLETED) peut être évaluée ; celle-ci est {}",
                status.as_str()
            ),
        ),
        Conflict::AwaitingPayment(order) => Text::new(
            format!(
                "De advertentie gaat online wanneer order {order} (de plaatsingskosten) betaald is"
            ),
            format!(
                "L'annonce sera en ligne une fois la commande {order} (les frais d'insertion) payée"
            ),
        ),
        Conflict::CategoryAwaitingPayment(order) => Text::new(
            format!(
                "De categorie blijft dezelfde tot order {order} (de plaatsingskosten in deze categorie) betaald is"
            ),
            format!(
                "La catégorie reste la même jusqu'au paiement de la commande {order} (les frais d'insertion de cette catégorie)"
            ),
        ),
        Conflict::RenewalAwaitingPayment(order) => Text::new(
            format!(
                "Een verlenging van deze advertentie wacht al op de betaling van order {order}"
            ),
            format!(
                "Une prolongation de cette annonce attend déjà le paiement de la commande {order}"
            ),
        ),
        Conflict::Reviewed => Text::new(
            "Deze transactie is al beoordeeld",
            "Cette transaction a déjà été évaluée",
        ),
        Conflict::NoBidding => Text::new(
            "Op deze advertentie kan niet worden geboden: haar prijstype is niet `bidding`",
            "Cette annonce ne prend pas d'offres : son type de prix n'est pas `bidding`",
        ),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The body is written by the render middleware, which knows the request id.
        let mut response = self.code.status().into_response();
        response.extensions_mut().insert(self);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_lower_case_with_dashes() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{} twice", code.as_str());
            assert!(
                code.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                code.as_str()
            );
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
        }
    }

    #[test]
    fn an_undone_transaction_is_answered_retry_soon() {
        let error = ApiError::from(DbError::Contention("40P01: deadlock detected".into()));
        assert_eq!(error.code, ErrorCode::ServiceUnavailable);
        assert_eq!(error.headers, vec![("Retry-After", "1".to_owned())]);
        let body = error.body("01ABC", Language::Dutch);
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("niets gewijzigd"),
            "{body}"
        );
        let unavailable = ApiError::from(DbError::Unavailable("08006".into()));
        assert!(unavailable.headers.is_empty() && unavailable.message.is_none());
    }

    #[test]
    fn a_write_of_unknown_outcome_is_not_said_to_have_changed_nothing() {
        let error = ApiError::from(DbError::OutcomeUnknown("connection lost".into()));
        assert_eq!(error.code, ErrorCode::OutcomeUnknown);
        assert!(error.headers.is_empty(), "no invitation to retry at once");
        let body = error.body("01ABC", Language::French);
        assert_eq!(body["statuscode"], 503);
        assert_eq!(body["code"], "outcome-unknown");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("si la modification a été faite"), "{body}");
    }

    #[test]
    fn body_has_the_documented_shape() {
        let error = ApiError::validation(vec![
            FieldError::new(
                "categoryId",
                "not-a-number",
                Text::new("geen getal", "pas un nombre"),
            )
            .with_value("abc"),
        ]);
        let body = error.body("01ABC", Language::French);
        assert_eq!(body["statuscode"], 400);
        assert_eq!(body["code"], "validation-failure");
        assert_eq!(body["logref"], "01ABC");
        assert_eq!(body["message"], "La validation a échoué");
        assert_eq!(
            body["_links"]["help"]["href"],
            "/docs/errors/validation-failure"
        );
        assert_eq!(body["details"][0]["field"], "categoryId");
        assert_eq!(body["details"][0]["message"], "pas un nombre");
        assert_eq!(body["details"][0]["value"], "abc");
    }
}
