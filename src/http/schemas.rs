//! JSON Schemas of the representations, for the OpenAPI document.

use serde_json::{Value, json};

use super::api::ITEM_ID_PATTERN;

/// Every component schema, with prefixed keys under `prefix`.
pub fn all(prefix: &str) -> Value {
    let link = json!({"$ref": "#/components/schemas/Link"});
    let labels = json!({"$ref": "#/components/schemas/Labels"});
    let links = |rels: &[&str]| {
        let mut properties = serde_json::Map::new();
        properties.insert("self".into(), link.clone());
        properties.insert("describedby".into(), link.clone());
        properties.insert(
            "curies".into(),
            json!({"type": "array", "items": {"$ref": "#/components/schemas/Curie"}}),
        );
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
        json!({"type": "object", "properties": properties, "required": ["self"]})
    };
    json!({
        "Link": {
            "type": "object",
            "properties": {
                "href": {"type": "string"},
                "templated": {"type": "boolean"},
                "type": {"type": "string"},
            },
            "required": ["href"],
        },
        "Curie": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "examples": [prefix]},
                "href": {"type": "string"},
                "templated": {"type": "boolean"},
            },
            "required": ["name", "href", "templated"],
        },
        "Labels": {
            "type": "object",
            "properties": {
                "nl-NL": {"type": "string"},
                "nl-BE": {"type": "string"},
                "fr-BE": {"type": "string"},
            },
            "required": ["nl-NL", "nl-BE", "fr-BE"],
        },
        "Error": {
            "type": "object",
            "description": "The body of every error answer of the resource API.",
            "properties": {
                "_links": {"type": "object", "properties": {"help": link}},
                "logref": {"type": "string", "description": "The request id (equal to the X-Request-Id header)."},
                "statuscode": {"type": "integer"},
                "code": {"type": "string"},
                "message": {"type": "string", "description": "In the deployment's language (see Content-Language)."},
                "details": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "field": {"type": "string"},
                            "fields": {"type": "array", "items": {"type": "string"}},
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "value": {},
                        },
                        "required": ["code", "message"],
                    },
                },
            },
            "required": ["logref", "statuscode", "code", "message"],
        },
        "Root": {
            "type": "object",
            "properties": {
                "_links": links(&["advertisements", "categories", "users", "me", "locations", "search"]),
                "message": {"type": "string"},
            },
        },
        "User": {
            "type": "object",
            "properties": {
                "_links": links(&["change-email", "user-brands"]),
                "userId": {"type": "integer"},
                "name": {"type": "string", "maxLength": 30},
                "locale": {"type": "string", "enum": ["nl-NL", "nl-BE", "fr-BE"]},
                "status": {"type": "string", "enum": ["unconfirmed", "confirmed"]},
                "confirmDate": {"type": ["string", "null"], "format": "date-time"},
                "dealerPackage": {"type": "string", "enum": ["NONE", "BASIC", "PLUS", "PREMIUM"]},
                "email": {"type": "string", "description": "Only to the user themself."},
                "phoneNumber": {"type": ["string", "null"], "description": "Only to the user themself."},
                "postcode": {"type": ["string", "null"], "maxLength": 6, "description": "Only to the user themself."},
            },
            "required": ["userId", "name", "locale", "status", "dealerPackage"],
        },
        "Advertisement": {
            "type": "object",
            "description": "Category attributes appear as further flat members.",
            "additionalProperties": true,
            "properties": {
                "_links": links(&["category", "seller", "advertisement-features", "advertisement-purchased-features", "advertisement-images", "advertisement-statistics", "bids", "advertisement-transactions", "advertisement-renew", "advertisement-website-link"]),
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
                "priceModel": {
                    "type": "object",
                    "properties": {
                        "modelType": {"type": "string", "enum": ["fixed", "bidding", "to be discussed", "by request", "trade", "see description", "buy it now", "reserved"]},
                        "askingPrice": {"type": "integer", "minimum": 0},
                        "minimalBid": {"type": "integer", "minimum": 0},
                        "retailPrice": {"type": "integer", "minimum": 0},
                    },
                    "required": ["modelType"],
                },
                "location": {
                    "type": "object",
                    "properties": {"postcode": {"type": "string"}, "cityName": {"type": ["string", "null"]}},
                    "required": ["postcode"],
                },
                "seller": {
                    "type": "object",
                    "properties": {
                        "sellerId": {"type": "integer"},
                        "sellerName": {"type": "string"},
                        "phoneNumber": {"type": ["string", "null"]},
                        "acceptPaypal": {"type": "boolean"},
                        "showEmail": {"type": "boolean"},
                    },
                },
                "rejectionReason": {"type": "string", "description": "Seller only, on a rejected ad."},
                "_embedded": {
                    "type": "object",
                    "properties": {
                        format!("{prefix}:advertisement-images"): {
                            "type": "object",
                            "properties": {
                                "_links": {"type": "object", "properties": {"self": link}},
                                "_embedded": {
                                    "type": "object",
                                    "properties": {
                                        format!("{prefix}:advertisement-image"): {"type": "array", "items": {"$ref": "#/components/schemas/Image"}},
                                    },
                                },
                            },
                        },
                    },
                },
            },
            "required": ["itemId", "title", "description", "categoryId", "status", "priceModel", "location"],
        },
        "Image": {
            "type": "object",
            "properties": {
                "_links": {
                    "type": "object",
                    "properties": {
                        "small": link, "medium": link, "large": link, "xlarge": link,
                        format!("{prefix}:image-blob"): link,
                        format!("{prefix}:image-meta"): link,
                        "describedby": link,
                    },
                },
                "mediaId": {"type": "string", "format": "uuid"},
                "imageId": {"type": "integer", "minimum": 1, "deprecated": true},
                "status": {"type": "string", "enum": ["processing", "available"]},
            },
            "required": ["mediaId", "imageId", "status"],
        },
        "AdvertisementList": {
            "type": "object",
            "properties": {
                "_links": links(&["first", "prev", "next", "last"]),
                "_embedded": {
                    "type": "object",
                    "properties": {
                        format!("{prefix}:advertisement"): {"type": "array", "items": {"$ref": "#/components/schemas/Advertisement"}},
                    },
                },
                "totalCount": {"type": "integer"},
                "offset": {"type": "integer"},
                "limit": {"type": "integer"},
            },
            "required": ["totalCount", "offset", "limit"],
        },
        "SearchResults": {
            "type": "object",
            "properties": {
                "_links": links(&["first", "prev", "next", "last"]),
                "_embedded": {
                    "type": "object",
                    "properties": {
                        format!("{prefix}:search-result"): {"type": "array", "items": {"$ref": "#/components/schemas/Advertisement"}},
                    },
                },
                "totalCount": {"type": "integer"},
                "offset": {"type": "integer"},
                "limit": {"type": "integer"},
            },
            "required": ["totalCount", "offset", "limit"],
        },
        "Transaction": {
            "type": "object",
            "properties": {
                "_links": links(&["advertisement", "buyer"]),
                "transactionId": {"type": "integer"},
                "buyerId": {"type": "integer"},
                "amount": {"type": "integer", "minimum": 0},
                "shippingCosts": {"type": "integer", "minimum": 0},
                "status": {"type": "string", "enum": ["CREATED", "COMPLETED", "CANCELLED"]},
                "createdDate": {"type": "string", "format": "date-time"},
            },
            "required": ["transactionId", "buyerId", "amount", "shippingCosts", "status"],
        },
        "TransactionList": {
            "type": "object",
            "properties": {
                "_links": {"type": "object", "properties": {"self": link, "curies": {"type": "array", "items": {"$ref": "#/components/schemas/Curie"}}}},
                "_embedded": {
                    "type": "object",
                    "properties": {
                        format!("{prefix}:advertisement-transaction"): {"type": "array", "items": {"$ref": "#/components/schemas/Transaction"}},
                    },
                },
            },
        },
        "Statistics": {
            "type": "object",
            "properties": {
                "_links": links(&["advertisement"]),
                "numberOfViews": {"type": "integer"},
                "numberOfAsqs": {"type": "integer"},
                "numberOfBids": {"type": "integer"},
                "numberOfUrlClicks": {"type": "integer"},
                "numberOfPhoneClicks": {"type": "integer"},
                "numberOfFavoriteClicks": {"type": "integer"},
            },
            "required": ["numberOfViews", "numberOfAsqs", "numberOfBids", "numberOfUrlClicks", "numberOfPhoneClicks", "numberOfFavoriteClicks"],
        },
        "Brands": {
            "type": "object",
            "properties": {
                "_links": {"type": "object", "properties": {"self": link, "describedby": link}},
                "brands": {"type": "array", "items": {"type": "string", "maxLength": 50}, "maxItems": 50},
            },
            "required": ["brands"],
        },
        "UserList": {
            "type": "object",
            "properties": {"_links": links(&["item"])},
        },
        "ChangeEmail": {
            "type": "object",
            "properties": {
                "_links": {"type": "object", "properties": {"self": link}},
                "message": {"type": "string"},
            },
            "required": ["message"],
        },
        "Health": {
            "type": "object",
            "properties": {"status": {"type": "string"}, "schemaVersion": {"type": "integer"}},
            "required": ["status"],
        },
        "Category": {
            "type": "object",
            "properties": {
                "_links": links(&["category-attributes", "category-fees", "up"]),
                "categoryId": {"type": "integer"},
                "name": {"type": "string", "description": "The label in the deployment's locale."},
                "labels": labels,
                "status": {"type": "string", "enum": ["open", "closed"]},
                "_embedded": {
                    "type": "object",
                    "description": "On an L1 category: its L2 children.",
                    "properties": {
                        format!("{prefix}:category"): {"type": "array", "items": {"$ref": "#/components/schemas/Category"}},
                    },
                },
            },
            "required": ["categoryId", "name", "labels", "status"],
        },
        "CategoryList": {
            "type": "object",
            "properties": {
                "_links": links(&[]),
                "_embedded": {
                    "type": "object",
                    "properties": {
                        format!("{prefix}:category"): {"type": "array", "items": {"$ref": "#/components/schemas/Category"}},
                    },
                },
            },
        },
        "CategoryAttributes": {
            "type": "object",
            "properties": {
                "_links": links(&["up"]),
                "fields": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "key": {"type": "string"},
                            "label": {"type": "string"},
                            "labels": labels,
                            "type": {"type": "string", "enum": ["STRING", "LIST", "NUMBER", "DOUBLE"]},
                            "values": {"type": "array", "items": {"type": "string"}},
                            "options": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {"key": {"type": "string"}, "labels": labels},
                                    "required": ["key", "labels"],
                                },
                            },
                            "minValue": {"type": "number"},
                            "maxValue": {"type": "number"},
                            "unit": {"type": "string"},
                            "units": {"type": "array", "items": {"type": "string"}},
                            "mandatory": {"type": "boolean"},
                            "searchable": {"type": "boolean"},
                            "writable": {"type": "boolean"},
                            "updateable": {"type": "boolean"},
                        },
                        "required": ["key", "label", "labels", "type", "values", "options", "units", "mandatory", "searchable", "writable", "updateable"],
                    },
                },
            },
            "required": ["fields"],
        },
        "AdvertisementContent": {
            "type": "object",
            "description": "What a POST or PUT of an advertisement sends (a PUT may send back what it read: read-only members are ignored). The category's attributes come as further flat members or as `attributes: [{key, value}]`. Beyond this schema the server checks the content against the category: an open leaf, its mandatory attributes, their types and ranges, a known postcode, the price model's amounts; a new ad starts `online` or `draft`, a change of `status` follows the lifecycle. Numbers may come as numeric strings.",
            "additionalProperties": true,
            "properties": {
                "title": {"type": "string"},
                "description": {"type": "string"},
                "categoryId": {"type": ["integer", "string"]},
                "status": {"type": ["string", "null"], "enum": ["draft", "online", "paused", "expired", "closed", "deleted", "rejected", null]},
                "location": {
                    "type": "object",
                    "properties": {"postcode": {"type": "string"}},
                    "required": ["postcode"],
                },
                "priceModel": {
                    "type": "object",
                    "properties": {
                        "modelType": {"type": "string"},
                        "askingPrice": {"type": ["integer", "string", "null"]},
                        "minimalBid": {"type": ["integer", "string", "null"]},
                        "retailPrice": {"type": ["integer", "string", "null"]},
                    },
                    "required": ["modelType"],
                },
                "locale": {"type": ["string", "null"], "enum": ["nl-NL", "nl-BE", "fr-BE", null]},
                "reserved": {"type": ["boolean", "null"]},
                "showOnMap": {"type": ["boolean", "null"]},
                "attributes": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"key": {"type": "string"}, "value": {}}, "required": ["key"]},
                },
            },
            "required": ["title", "description", "categoryId", "location", "priceModel"],
        },
        "JsonPatch": {
            "type": "array",
            "description": "RFC 6902, applied to the advertisement as a read shows it; `replace` of an absent member acts as `add`. The result is then checked as a PUT.",
            "items": {
                "type": "object",
                "properties": {
                    "op": {"type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]},
                    "path": {"type": "string"},
                    "from": {"type": "string"},
                    "value": {},
                },
                "required": ["op", "path"],
            },
        },
        "NewTransaction": {
            "type": "object",
            "description": "The buyer must be a user other than the seller.",
            "properties": {
                "buyerId": {"type": "integer", "minimum": 1, "maximum": i64::MAX},
                "amount": {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "description": "Euro cents."},
                "shippingCosts": {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "description": "Euro cents."},
            },
            "required": ["buyerId", "amount", "shippingCosts"],
        },
        "UpcallConfirmation": {
            "type": "object",
            "description": "Phone numbers of 6 to 20 digits (at most 32 characters with spaces, dashes, dots, parentheses and a leading +); times ISO 8601 with an offset, `endTime` not before `startTime`.",
            "properties": {
                "callerPhoneNumber": {"type": "string"},
                "calleePhoneNumber": {"type": "string"},
                "startTime": {"type": "string"},
                "endTime": {"type": "string"},
            },
            "required": ["callerPhoneNumber", "calleePhoneNumber", "startTime", "endTime"],
        },
        "NewUser": {
            "type": "object",
            "description": "An e-mail address not in use; a name of at most 30 characters, a postcode of at most 6, a plausible phone number, a password of at least 8 characters (without it the owner chooses one when confirming).",
            "properties": {
                "email": {"type": "string"},
                "name": {"type": ["string", "null"]},
                "postcode": {"type": ["string", "null"]},
                "phoneNumber": {"type": ["string", "null"]},
                "password": {"type": ["string", "null"]},
            },
            "required": ["email"],
        },
        "EmailChange": {
            "type": "object",
            "description": "An e-mail address not in use.",
            "properties": {"newEmail": {"type": "string"}},
            "required": ["newEmail"],
        },
        "BrandList": {
            "type": "object",
            "description": "Names of 1 to 50 characters (after trimming), on one line, none twice ignoring case.",
            "properties": {"brands": {"type": "array", "items": {"type": "string"}, "maxItems": 50}},
            "required": ["brands"],
        },
        "TokenRequest": {
            "type": "object",
            "description": "RFC 6749 §4.1.3, §6 and §4.4; the client's credentials here or as HTTP Basic, not both.",
            "properties": {
                "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token", "client_credentials"]},
                "code": {"type": "string"},
                "redirect_uri": {"type": "string"},
                "code_verifier": {"type": "string"},
                "refresh_token": {"type": "string"},
                "scope": {"type": "string"},
                "client_id": {"type": "string"},
                "client_secret": {"type": "string"},
            },
            "required": ["grant_type"],
        },
        "TokenParameter": {
            "type": "object",
            "description": "RFC 7009 and RFC 7662: the token, and the client's credentials here or as HTTP Basic.",
            "properties": {
                "token": {"type": "string"},
                "token_type_hint": {"type": "string"},
                "client_id": {"type": "string"},
                "client_secret": {"type": "string"},
            },
            "required": ["token"],
        },
        "SignInForm": {
            "type": "object",
            "description": "The sign-in form (`username`, `password`) or the consent form (`decision`), each with the page's CSRF token and session cookie.",
            "properties": {
                "csrf_token": {"type": "string"},
                "username": {"type": "string"},
                "password": {"type": "string"},
                "decision": {"type": "string", "enum": ["allow", "deny"]},
            },
            "required": ["csrf_token"],
        },
        "ConfirmationForm": {
            "type": "object",
            "description": "The form of the confirmation page: the link's token, and a password of at least 8 characters if the account has none.",
            "properties": {"token": {"type": "string"}, "password": {"type": "string"}},
            "required": ["token"],
        },
        "TokenResponse": {
            "type": "object",
            "description": "RFC 6749 §5.1. No `refresh_token` for client credentials.",
            "properties": {
                "access_token": {"type": "string"},
                "token_type": {"type": "string", "enum": ["bearer"]},
                "expires_in": {"type": "integer", "minimum": 1},
                "refresh_token": {"type": "string"},
                "scope": {"type": "string"},
            },
            "required": ["access_token", "token_type", "expires_in", "scope"],
        },
        "OAuthError": {
            "type": "object",
            "description": "RFC 6749 §5.2.",
            "properties": {
                "error": {"type": "string", "enum": ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"]},
                "error_description": {"type": "string"},
            },
            "required": ["error"],
        },
        "Revocation": {
            "type": "object",
            "description": "RFC 7009: an empty object, whether the token was known or not.",
            "additionalProperties": false,
        },
        "Introspection": {
            "type": "object",
            "description": "RFC 7662. An unknown, expired or revoked token, or one of another client, is `{\"active\": false}` alone.",
            "properties": {
                "active": {"type": "boolean"},
                "scope": {"type": "string"},
                "client_id": {"type": "string"},
                "sub": {"type": "string", "description": "The user id, for a user's token."},
                "token_type": {"type": "string", "enum": ["access_token", "refresh_token"]},
                "exp": {"type": "integer"},
                "iat": {"type": "integer"},
            },
            "required": ["active"],
        },
        "AuthorizationServerMetadata": {
            "type": "object",
            "description": "RFC 8414.",
            "properties": {
                "issuer": {"type": "string"},
                "authorization_endpoint": {"type": "string"},
                "token_endpoint": {"type": "string"},
                "revocation_endpoint": {"type": "string"},
                "introspection_endpoint": {"type": "string"},
                "scopes_supported": {"type": "array", "items": {"type": "string"}},
                "response_types_supported": {"type": "array", "items": {"type": "string"}},
                "grant_types_supported": {"type": "array", "items": {"type": "string"}},
                "token_endpoint_auth_methods_supported": {"type": "array", "items": {"type": "string"}},
                "revocation_endpoint_auth_methods_supported": {"type": "array", "items": {"type": "string"}},
                "introspection_endpoint_auth_methods_supported": {"type": "array", "items": {"type": "string"}},
                "code_challenge_methods_supported": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["issuer", "authorization_endpoint", "token_endpoint", "response_types_supported"],
        },
        "OpenApiDocument": {
            "type": "object",
            "description": "This document (OpenAPI 3.1).",
            "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}},
            "required": ["openapi", "info", "paths"],
        },
        "CategoryFees": {
            "type": "object",
            "description": "Under construction, subject to change.",
            "properties": {
                "_links": links(&["up"]),
                "insertionFee": {"type": "integer", "minimum": 0, "description": "Euro cents."},
                "runningSubscriptions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"durationDays": {"type": "integer"}, "fee": {"type": "integer"}},
                        "required": ["durationDays", "fee"],
                    },
                },
                "runningDays": {"type": "integer", "description": "Souk's own: how many days an ad in this category runs."},
            },
            "required": ["insertionFee", "runningSubscriptions"],
        },
    })
}
