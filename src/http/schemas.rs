//! JSON Schemas of the representations, for the OpenAPI document.

use serde_json::{Value, json};

use super::api::ITEM_ID_PATTERN;
use crate::domain::search::request::MAX_DISTANCE;
use crate::usecase::advertisements::{PATCH_MAX_OPERATIONS, PATCHED_MAX_BYTES};

mod commerce;
mod hooks;
mod images;

/// An object schema with these members, of which those in `required` must be present
/// (an empty list writes no `required`).
fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// `schema`, or `null` (which a request's reader takes as absent).
fn nullable(mut schema: Value) -> Value {
    let kind = schema["type"].take();
    schema["type"] = json!([kind, "null"]);
    if let Some(values) = schema.get_mut("enum").and_then(Value::as_array_mut) {
        values.push(Value::Null);
    }
    schema
}

/// `schema`, said in words as well.
fn described(description: &str, mut schema: Value) -> Value {
    schema["description"] = json!(description);
    schema
}

/// `schema`, taking members beyond those it lists (an advertisement's attributes).
fn open(mut schema: Value) -> Value {
    schema["additionalProperties"] = json!(true);
    schema
}

/// A list of the component schema `name`.
fn list_of(name: &str) -> Value {
    array_of(json!({"$ref": format!("#/components/schemas/{name}")}))
}

fn array_of(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// An object of string members (a form's fields, say): the `required` ones, then the others.
fn string_members(required: &[&str], optional: &[&str]) -> Value {
    let string = json!({"type": "string"});
    let properties = required
        .iter()
        .chain(optional)
        .map(|name| (name.to_string(), string.clone()));
    object(properties.collect(), required)
}

/// `list`, an object with `_links`, as a page of a collection (api.md, pagination): with
/// the links `first`, `prev`, `next` and `last`, and `totalCount`, `offset` and `limit`,
/// which every page has.
fn paged(mut list: Value) -> Value {
    let link = json!({"$ref": "#/components/schemas/Link"});
    for rel in ["first", "prev", "next", "last"] {
        list["properties"]["_links"]["properties"][rel] = link.clone();
    }
    for member in ["totalCount", "offset", "limit"] {
        list["properties"][member] = json!({"type": "integer"});
    }
    if !list["required"].is_array() {
        list["required"] = json!([]);
    }
    if let Some(required) = list["required"].as_array_mut() {
        required.extend(["totalCount", "offset", "limit"].map(Value::from));
    }
    list
}

/// `schema` with one more member, `name`.
fn with(mut schema: Value, name: &str, member: Value) -> Value {
    schema["properties"][name] = member;
    schema
}

/// Every component schema, with prefixed keys under `prefix`.
pub fn all(prefix: &str) -> Value {
    let link = json!({"$ref": "#/components/schemas/Link"});
    let labels = json!({"$ref": "#/components/schemas/Labels"});
    let links = |rels: &[&str]| {
        let mut properties = serde_json::Map::new();
        properties.insert("self".into(), link.clone());
        properties.insert("describedby".into(), link.clone());
        properties.insert("curies".into(), list_of("Curie"));
        for rel in rels {
            let key = if rel.contains(':')
                || ["up", "item", "first", "prev", "next", "last"].contains(rel)
            {
                (*rel).to_owned()
            } else {
                format!("{prefix}:{rel}")
            };
            properties.insert(key, link.clone());
        }
        object(properties.into(), &["self"])
    };
    // A list of names, as the metadata gives them.
    let names = json!({"type": "array", "items": {"type": "string"}});
    // An `_embedded` member: a list of the component schema `schema` under the rel `rel`.
    let embedded =
        |rel: &str, schema: &str| object(json!({format!("{prefix}:{rel}"): list_of(schema)}), &[]);
    let mut schemas = json!({
        "Link": object(
            json!({"href": {"type": "string"}, "templated": {"type": "boolean"}, "type": {"type": "string"}}),
            &["href"],
        ),
        "Curie": object(
            json!({
                "name": {"type": "string", "examples": [prefix]},
                "href": {"type": "string"},
                "templated": {"type": "boolean"},
            }),
            &["name", "href", "templated"],
        ),
        "Labels": string_members(&["nl-NL", "nl-BE", "fr-BE"], &[]),
        "Error": described("The body of every error answer of the resource API.", object(
            json!({
                "_links": object(json!({"help": link}), &[]),
                "logref": {"type": "string", "description": "The request id (equal to the X-Request-Id header)."},
                "statuscode": {"type": "integer"},
                "code": {"type": "string"},
                "message": {"type": "string", "description": "In the deployment's language (see Content-Language)."},
                "details": {
                    "type": "array",
                    "items": object(
                        json!({
                            "field": {"type": "string"},
                            "fields": {"type": "array", "items": {"type": "string"}},
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "value": {},
                        }),
                        &["code", "message"],
                    ),
                },
            }),
            &["logref", "statuscode", "code", "message"],
        )),
        "Root": object(
            json!({
                "_links": links(&["advertisements", "categories", "users", "me", "locations", "search"]),
                "message": {"type": "string"},
            }),
            &[],
        ),
        "User": object(
            json!({
                "_links": links(&["change-email", "user-brands", "user-reviews", "user-advertisements"]),
                "userId": {"type": "integer"},
                "name": {"type": "string", "maxLength": 30},
                "locale": {"type": "string", "enum": ["nl-NL", "nl-BE", "fr-BE"]},
                "status": {"type": "string", "enum": ["unconfirmed", "confirmed"]},
                "confirmDate": {"type": ["string", "null"], "format": "date-time"},
                "dealerPackage": {"type": "string", "enum": ["NONE", "BASIC", "PLUS", "PREMIUM"]},
                "email": {"type": "string", "description": "Only to the user themself."},
                "phoneNumber": {"type": ["string", "null"], "description": "Only to the user themself."},
                "postcode": {"type": ["string", "null"], "maxLength": 6},
            }),
            &["userId", "name", "locale", "status", "dealerPackage"],
        ),
        "Advertisement": described("Category attributes appear as further flat members.", open(object(
            json!({
                "_links": links(&["category", "seller", "advertisement-features", "advertisement-purchased-features", "advertisement-images", "advertisement-statistics", "bids", "advertisement-transactions", "advertisement-renew", "advertisement-website-link", "order"]),
                "itemId": {"type": "string", "pattern": ITEM_ID_PATTERN},
                "title": {"type": "string", "minLength": 2, "maxLength": 60},
                "description": {"type": "string", "maxLength": 4000},
                "categoryId": {"type": "integer"},
                "status": {"type": "string", "enum": ["draft", "online", "paused", "expired", "closed", "deleted", "rejected"]},
                "startDate": {"type": ["string", "null"], "format": "date-time"},
                "closeDate": {"type": ["string", "null"], "format": "date-time"},
                "renewPossible": {"type": "boolean"},
                "locale": {"type": "string", "enum": ["nl-NL", "nl-BE", "fr-BE"]},
                "reserved": {"type": "boolean"},
                "showOnMap": {"type": "boolean"},
                "websiteUrl": {"type": ["string", "null"], "maxLength": 200, "description": "The seller's website (`http://` or `https://`); shown to others only while the ad's `url` feature runs."},
                "priceModel": object(
                    json!({
                        "modelType": {"type": "string", "enum": ["fixed", "bidding", "to be discussed", "by request", "trade", "see description", "buy it now", "reserved"]},
                        "askingPrice": {"type": "integer", "minimum": 0},
                        "minimalBid": {"type": "integer", "minimum": 0},
                        "retailPrice": {"type": "integer", "minimum": 0},
                    }),
                    &["modelType"],
                ),
                "location": object(
                    json!({"postcode": {"type": "string"}, "cityName": {"type": ["string", "null"]}}),
                    &["postcode"],
                ),
                "seller": object(
                    json!({
                        "sellerId": {"type": "integer"},
                        "sellerName": {"type": "string"},
                        "phoneNumber": {"type": ["string", "null"]},
                        "acceptPaypal": {"type": "boolean"},
                        "showEmail": {"type": "boolean"},
                    }),
                    &[],
                ),
                "rejectionReason": {"type": "string", "description": "Seller only, on a rejected ad."},
                "awaitingPayment": {"type": "boolean", "const": true, "description": "Seller only: the draft goes online when the order its `order` link names (its insertion fee) is paid."},
                "activeFeatures": {"type": "array", "items": {"type": "string", "enum": ["dagtopper", "omhoogplaatsen", "opvalsticker", "url", "homepaginaAdvertentie"]}, "description": "The features whose effect runs now (`dagtopper` for any of the three top-of-the-day features)."},
                "_embedded": object(
                    json!({
                        format!("{prefix}:advertisement-images"): object(
                            json!({
                                "_links": object(json!({"self": link}), &[]),
                                "_embedded": embedded("advertisement-image", "Image"),
                            }),
                            &[],
                        ),
                        format!("{prefix}:advertisement-image"): described(
                            "Search results only: the images once more, as a list of their own.",
                            list_of("Image"),
                        ),
                    }),
                    &[],
                ),
            }),
            &["itemId", "title", "description", "categoryId", "status", "priceModel", "location"],
        ))),
        "AdvertisementList": paged(object(
            json!({
                "_links": links(&[]),
                "_embedded": embedded("advertisement", "Advertisement"),
            }),
            &[],
        )),
        "SearchResults": paged(object(
            json!({
                "_links": links(&[]),
                "_embedded": embedded("search-result", "Advertisement"),
                "facets": {"$ref": "#/components/schemas/SearchFacets"},
            }),
            &[],
        )),
        "SearchFacets": object(
            json!({
                "categories": array_of(object(
                    json!({
                        "categoryId": {"type": "integer"},
                        "parentId": {"type": "integer"},
                        "count": {"type": "integer", "minimum": 1},
                    }),
                    &["categoryId", "count"],
                )),
                "attributes": {
                    "type": "object",
                    "additionalProperties": array_of(object(
                        json!({
                            "value": {"type": "string"},
                            "count": {"type": "integer", "minimum": 1},
                        }),
                        &["value", "count"],
                    )),
                },
            }),
            &["categories", "attributes"],
        ),
        "Transaction": object(
            json!({
                "_links": links(&["advertisement", "buyer"]),
                "transactionId": {"type": "integer"},
                "buyerId": {"type": "integer"},
                "amount": {"type": "integer", "minimum": 0},
                "shippingCosts": {"type": "integer", "minimum": 0},
                "status": {"type": "string", "enum": ["CREATED", "COMPLETED", "CANCELLED"]},
                "createdDate": {"type": "string", "format": "date-time"},
            }),
            &["transactionId", "buyerId", "amount", "shippingCosts", "status"],
        ),
        "TransactionList": object(
            json!({
                "_links": object(json!({"self": link, "curies": list_of("Curie")}), &[]),
                "_embedded": embedded("advertisement-transaction", "Transaction"),
            }),
            &[],
        ),
        "SavedSearch": object(
            json!({
                "_links": links(&["search", "owner"]),
                "savedSearchId": {"type": "integer"},
                "userId": {"type": "integer"},
                "searchRequest": {"$ref": "#/components/schemas/SearchRequest"},
                "alert": {"type": "string", "enum": ["none", "immediate", "daily"]},
                "createdDate": {"type": "string", "format": "date-time"},
                "updatedDate": {"type": "string", "format": "date-time"},
            }),
            &["savedSearchId", "userId", "searchRequest", "alert"],
        ),
        "SavedSearchList": paged(object(
            json!({
                "_links": links(&[]),
                "_embedded": embedded("saved-search", "SavedSearch"),
            }),
            &[],
        )),
        "SearchRequest": described(
            "The parameters of `GET /v1/search` that a saved search keeps; `filters` also takes each searchable attribute of the category, a LIST or STRING one as `<key>: [values]` (values without commas), a numeric one as `<key>: {from, to}`.",
            object(
                // Every member may be `null`: absent, as many clients write an unset one.
                json!({
                    "query": nullable(json!({"type": "string", "maxLength": 100})),
                    "categoryId": nullable(json!({"type": "integer", "minimum": 1, "maximum": i64::MAX})),
                    "sellerId": nullable(json!({"type": "integer", "minimum": 1, "maximum": i64::MAX})),
                    "withImages": nullable(json!({"type": "boolean"})),
                    "searchDescription": nullable(json!({"type": "boolean"})),
                    "locale": nullable(json!({"type": "string", "enum": ["nl-NL", "nl-BE", "fr-BE"]})),
                    "filters": nullable(object(
                        json!({
                            "price": nullable(object(json!({
                                "from": nullable(json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})),
                                "to": nullable(json!({"type": "integer", "minimum": 0, "maximum": i64::MAX})),
                            }), &[])),
                            "postCode": nullable(json!({"type": "string", "maxLength": 10})),
                            "distance": nullable(json!({"type": "integer", "minimum": 1, "maximum": MAX_DISTANCE, "description": "Metres from `postCode`, which it needs."})),
                        }),
                        &[],
                    )),
                }),
                &[],
            ),
        ),
        "SavedSearchInput": object(
            json!({
                "searchRequest": {"$ref": "#/components/schemas/SearchRequest"},
                "alert": {"type": "string", "enum": ["none", "immediate", "daily"], "default": "none"},
            }),
            &["searchRequest"],
        ),
        "Bid": object(
            json!({
                "_links": links(&["advertisement", "bidder"]),
                "bidId": {"type": "integer"},
                "id": {"type": "integer", "description": "The same as `bidId` (the original's examples used it)."},
                "amount": {"type": "integer", "minimum": 1, "description": "Euro cents."},
                "placeDate": {"type": "string", "format": "date-time"},
                "bidder": described(
                    "`id` (and the `bidder` link) only to the ad's seller and to the bidder; to anyone else `nickName` is an anonymous label.",
                    object(json!({"id": {"type": "integer"}, "nickName": {"type": "string"}}), &["nickName"]),
                ),
            }),
            &["bidId", "id", "amount", "placeDate", "bidder"],
        ),
        "BidList": paged(object(
            json!({
                "_links": links(&["advertisement"]),
                "_embedded": embedded("bid", "Bid"),
                "minimumNextBid": {"type": "integer", "description": "The least amount a new bid may have now; absent when the ad takes no bids."},
            }),
            &[],
        )),
        "BidderQuestionSent": object(
            json!({"_links": links(&["bid"]), "message": {"type": "string"}}),
            &["message"],
        ),
        "Statistics": object(
            json!({
                "_links": links(&["advertisement"]),
                "numberOfViews": {"type": "integer"},
                "numberOfAsqs": {"type": "integer"},
                "numberOfBids": {"type": "integer"},
                "numberOfUrlClicks": {"type": "integer"},
                "numberOfPhoneClicks": {"type": "integer"},
                "numberOfFavoriteClicks": {"type": "integer"},
            }),
            &["numberOfViews", "numberOfAsqs", "numberOfBids", "numberOfUrlClicks", "numberOfPhoneClicks", "numberOfFavoriteClicks"],
        ),
        "Brands": object(
            json!({
                "_links": object(json!({"self": link, "describedby": link}), &[]),
                "brands": {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 50},
            }),
            &["brands"],
        ),
        "Location": object(
            json!({
                "_links": object(json!({"self": link, "describedby": link, "find": link}), &["self", "find"]),
                "postcode": {"type": "string", "description": "As normalised: `8301AA`, `9000`."},
                "street": {"type": "string", "description": "Empty where the data has no streets (the shipped data has none)."},
                "city": {"type": "string"},
                "province": {"type": "string"},
                "provinceShortCode": {"type": "string", "description": "The province's part of its ISO 3166-2 code: `FL`, `VOV`, `BRU`."},
            }),
            &["postcode", "street", "city", "province", "provinceShortCode"],
        ),
        "UserList": object(json!({"_links": links(&["item"])}), &[]),
        "ChangeEmail": object(
            json!({"_links": object(json!({"self": link}), &[]), "message": {"type": "string"}}),
            &["message"],
        ),
        "Health": object(
            json!({"status": {"type": "string"}, "schemaVersion": {"type": "integer"}}),
            &["status"],
        ),
        "Category": object(
            json!({
                "_links": links(&["category-attributes", "category-fees", "up"]),
                "categoryId": {"type": "integer"},
                "name": {"type": "string", "description": "The label in the deployment's locale."},
                "labels": labels,
                "status": {"type": "string", "enum": ["open", "closed"]},
                "_embedded": described("On an L1 category: its L2 children.", embedded("category", "Category")),
            }),
            &["categoryId", "name", "labels", "status"],
        ),
        "CategoryList": object(
            json!({"_links": links(&[]), "_embedded": embedded("category", "Category")}),
            &[],
        ),
        "CategoryAttributes": object(
            json!({
                "_links": links(&["up"]),
                "fields": {
                    "type": "array",
                    "items": object(
                        json!({
                            "key": {"type": "string"},
                            "label": {"type": "string"},
                            "labels": labels,
                            "type": {"type": "string", "enum": ["STRING", "LIST", "NUMBER", "DOUBLE"]},
                            "values": {"type": "array", "items": {"type": "string"}},
                            "options": {
                                "type": "array",
                                "items": object(json!({"key": {"type": "string"}, "labels": labels}), &["key", "labels"]),
                            },
                            "minValue": {"type": "number"},
                            "maxValue": {"type": "number"},
                            "unit": {"type": "string"},
                            "units": {"type": "array", "items": {"type": "string"}},
                            "mandatory": {"type": "boolean"},
                            "searchable": {"type": "boolean"},
                            "writable": {"type": "boolean"},
                            "updateable": {"type": "boolean"},
                        }),
                        &["key", "label", "labels", "type", "values", "options", "units", "mandatory", "searchable", "writable", "updateable"],
                    ),
                },
            }),
            &["fields"],
        ),
        "AdvertisementContent": described(
            "What a POST or PUT of an advertisement sends (a PUT may send back what it read: read-only members are ignored). The category's attributes come as further flat members or as `attributes: [{key, value}]`. Beyond this schema the server checks the content against the category: an open leaf, its mandatory attributes, their types and ranges, a known postcode, the price model's amounts; a new ad starts `online` or `draft`, a change of `status` follows the lifecycle. Numbers may come as numeric strings.",
            open(object(
                json!({
                    "title": {"type": "string"},
                    "description": {"type": "string"},
                    "categoryId": {"type": ["integer", "string"]},
                    "status": {"type": ["string", "null"], "enum": ["draft", "online", "paused", "expired", "closed", "deleted", "rejected", null]},
                    "location": object(json!({"postcode": {"type": "string"}}), &["postcode"]),
                    "priceModel": object(
                        json!({
                            "modelType": {"type": "string"},
                            "askingPrice": {"type": ["integer", "string", "null"]},
                            "minimalBid": {"type": ["integer", "string", "null"]},
                            "retailPrice": {"type": ["integer", "string", "null"]},
                        }),
                        &["modelType"],
                    ),
                    "locale": {"type": ["string", "null"], "enum": ["nl-NL", "nl-BE", "fr-BE", null]},
                    "reserved": {"type": ["boolean", "null"]},
                    "showOnMap": {"type": ["boolean", "null"]},
                    "websiteUrl": {"type": ["string", "null"], "maxLength": 200, "description": "The seller's website, `http://` or `https://` with a host, no spaces (else `invalid-url`)."},
                    "attributes": {
                        "type": "array",
                        "items": object(json!({"key": {"type": "string"}, "value": {}}), &["key"]),
                    },
                }),
                &["title", "description", "categoryId", "location", "priceModel"],
            )),
        ),
        "JsonPatch": {
            "type": "array",
            "maxItems": PATCH_MAX_OPERATIONS,
            "description": format!("RFC 6902, applied to the advertisement as a read shows it; `replace` of an absent member acts as `add`. The result is then checked as a PUT. At most {PATCH_MAX_OPERATIONS} operations, and a result of at most {PATCHED_MAX_BYTES} bytes as JSON."),
            "items": object(
                json!({
                    "op": {"type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]},
                    "path": {"type": "string"},
                    "from": {"type": "string"},
                    "value": {},
                }),
                &["op", "path"],
            ),
        },
        "NewTransaction": described("The buyer must be a user other than the seller.", object(
            json!({
                "buyerId": {"type": "integer", "minimum": 1, "maximum": i64::MAX},
                "amount": {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "description": "Euro cents."},
                "shippingCosts": {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "description": "Euro cents."},
            }),
            &["buyerId", "amount", "shippingCosts"],
        )),
        "NewBid": object(
            json!({"amount": {"type": "integer", "minimum": 1, "maximum": 1_000_000_000, "description": "Euro cents."}}),
            &["amount"],
        ),
        "BidderQuestion": object(
            json!({
                "message": {"type": "string", "minLength": 1, "maxLength": 2000},
                "phoneNumber": {"type": "string", "description": "Optional: 6 to 20 digits, at most 32 characters with spaces, dashes, dots, parentheses and a leading +."},
            }),
            &["message"],
        ),
        "UpcallConfirmation": described(
            "Phone numbers of 6 to 20 digits (at most 32 characters with spaces, dashes, dots, parentheses and a leading +); times ISO 8601 with an offset, `endTime` not before `startTime`.",
            string_members(&["callerPhoneNumber", "calleePhoneNumber", "startTime", "endTime"], &[]),
        ),
        "NewUser": described(
            "An e-mail address not in use; a name of at most 30 characters, a postcode of at most 6, a plausible phone number, a password of at least 8 characters (without it the owner chooses one when confirming).",
            object(
                json!({
                    "email": {"type": "string"},
                    "name": {"type": ["string", "null"]},
                    "postcode": {"type": ["string", "null"]},
                    "phoneNumber": {"type": ["string", "null"]},
                    "password": {"type": ["string", "null"]},
                }),
                &["email"],
            ),
        ),
        "EmailChange": described("An e-mail address not in use.", string_members(&["newEmail"], &[])),
        "BrandList": described(
            "Names of 1 to 50 characters (after trimming), on one line, none twice ignoring case.",
            object(json!({"brands": {"type": "array", "items": {"type": "string"}, "maxItems": 50}}), &["brands"]),
        ),
        "TokenRequest": described(
            "RFC 6749 §4.1.3, §6 and §4.4; the client's credentials here or as HTTP Basic, not both.",
            with(
                string_members(&["grant_type"], &["code", "redirect_uri", "code_verifier", "refresh_token", "scope", "client_id", "client_secret"]),
                "grant_type",
                json!({"type": "string", "enum": ["authorization_code", "refresh_token", "client_credentials"]}),
            ),
        ),
        "TokenParameter": described(
            "RFC 7009 and RFC 7662: the token, and the client's credentials here or as HTTP Basic.",
            string_members(&["token"], &["token_type_hint", "client_id", "client_secret"]),
        ),
        "SignInForm": described(
            "The sign-in form (`username`, `password`) or the consent form (`decision`), each with the page's CSRF token and session cookie.",
            with(
                string_members(&["csrf_token"], &["username", "password"]),
                "decision",
                json!({"type": "string", "enum": ["allow", "deny"]}),
            ),
        ),
        "ConfirmationForm": described(
            "The form of the confirmation page: the link's token, and a password of at least 8 characters if the account has none.",
            string_members(&["token"], &["password"]),
        ),
        "TokenResponse": described("RFC 6749 §5.1. No `refresh_token` for client credentials.", object(
            json!({
                "access_token": {"type": "string"},
                "token_type": {"type": "string", "enum": ["bearer"]},
                "expires_in": {"type": "integer", "minimum": 1},
                "refresh_token": {"type": "string"},
                "scope": {"type": "string"},
            }),
            &["access_token", "token_type", "expires_in", "scope"],
        )),
        "OAuthError": described("RFC 6749 §5.2. The server's own failures carry RFC 6749 §4.1.2.1's `server_error` (500) and `temporarily_unavailable` (503), and every error the server answers itself (a body too large, a timeout, the database unreachable) names the API's error code in `error_description` (its page is `/docs/errors/{code}`).", object(
            json!({
                "error": {"type": "string", "enum": ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "server_error", "temporarily_unavailable"]},
                "error_description": {"type": "string"},
            }),
            &["error"],
        )),
        "Revocation": {
            "type": "object",
            "description": "RFC 7009: an empty object, whether the token was known or not.",
            "additionalProperties": false,
        },
        "Introspection": described(
            "RFC 7662. An unknown, expired or revoked token, or one of another client, is `{\"active\": false}` alone.",
            object(
                json!({
                    "active": {"type": "boolean"},
                    "scope": {"type": "string"},
                    "client_id": {"type": "string"},
                    "sub": {"type": "string", "description": "The user id, for a user's token."},
                    "token_type": {"type": "string", "enum": ["bearer"], "description": "An access token's type (RFC 6749 §5.1); absent for a refresh token."},
                    "exp": {"type": "integer"},
                    "iat": {"type": "integer"},
                }),
                &["active"],
            ),
        ),
        "AuthorizationServerMetadata": described("RFC 8414.", object(
            json!({
                "issuer": {"type": "string"},
                "authorization_endpoint": {"type": "string"},
                "token_endpoint": {"type": "string"},
                "revocation_endpoint": {"type": "string"},
                "introspection_endpoint": {"type": "string"},
                "scopes_supported": names,
                "response_types_supported": names,
                "grant_types_supported": names,
                "token_endpoint_auth_methods_supported": names,
                "revocation_endpoint_auth_methods_supported": names,
                "introspection_endpoint_auth_methods_supported": names,
                "code_challenge_methods_supported": names,
            }),
            &["issuer", "authorization_endpoint", "token_endpoint", "response_types_supported"],
        )),
        "OpenApiDocument": described("This document (OpenAPI 3.1).", object(
            json!({"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}),
            &["openapi", "info", "paths"],
        )),
        "CategoryFees": described("Under construction, subject to change.", object(
            json!({
                "_links": links(&["up"]),
                "insertionFee": {"type": "integer", "minimum": 0, "description": "Euro cents."},
                "runningSubscriptions": {
                    "type": "array",
                    "items": object(
                        json!({"durationDays": {"type": "integer"}, "fee": {"type": "integer"}}),
                        &["durationDays", "fee"],
                    ),
                },
                "runningDays": {"type": "integer", "description": "Souk's own: how many days an ad in this category runs."},
            }),
            &["insertionFee", "runningSubscriptions"],
        )),
    });
    for part in [
        commerce::schemas(&links, &embedded),
        images::schemas(prefix, &link, &embedded),
        hooks::schemas(&links, &embedded, &link),
    ] {
        if let (Some(schemas), Value::Object(more)) = (schemas.as_object_mut(), part) {
            schemas.extend(more);
        }
    }
    schemas
}
