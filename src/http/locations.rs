//! `/v1/locations?postcode=`: the place, province and province code of a postcode.

use serde_json::json;

use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;
use crate::domain::places::Postcode;
use crate::error::{ApiError, ErrorCode};
use crate::hal::Resource;
use crate::store::locations;

use super::api::{Api, get};
use super::extract::{Context, Query};
use super::render::Json;

pub fn routes(api: Api) -> Api {
    use ErrorCode::*;
    api.resource(
        get("/locations", "findLocation")
            .tag("Locations")
            .authenticated()
            .summary("The location of a postcode")
            .description("A Dutch postcode (`8301AA`; spaces and lower case are fine: `8301 aa`) or a Belgian one (`9000`). Answers the postcode as normalised, `street` (empty: the data has no streets), `city`, `province` and `provinceShortCode` (the ISO 3166-2 part: `FL`, `VOV`). A Dutch postcode that the data holds by its 4-digit area only is answered from that area.")
            .required_query_param("postcode", json!({"type": "string", "minLength": 1, "examples": ["8301AA", "8301 aa", "9000"]}), "The postcode to look up: four digits and two letters (Dutch) or four digits (Belgian), the first digit not 0; white space anywhere is ignored and letters may be lower case. Anything else is a field error.")
            .ok(200, "The location", "Location")
            .errors(&[ValidationFailure, LocationNotFound]),
        find,
    )
}

#[derive(serde::Deserialize)]
struct FindQuery {
    postcode: Option<String>,
}

async fn find(
    Context { state, hal }: Context,
    Query(query): Query<FindQuery>,
) -> Result<Json, ApiError> {
    let postcode = parse_postcode(query.postcode.as_deref())?;
    let lookup = postcode.clone();
    let row = state
        .db
        .read(move |conn| Box::pin(async move { locations::find(conn, &lookup).await }))
        .await?
        .ok_or(ErrorCode::LocationNotFound)?;
    let links = hal
        .links(
            format!("{}?postcode={postcode}", hal.path("/locations")),
            Resource::Location,
        )
        .plain_templated("find", hal.path("/locations{?postcode}"))
        .build();
    Ok(Json::ok(json!({
        "_links": links,
        "postcode": postcode.code(),
        "street": "",
        "city": row.place,
        "province": row.province,
        "provinceShortCode": row.province_code,
    })))
}

fn parse_postcode(raw: Option<&str>) -> Result<Postcode, ApiError> {
    let raw = raw.ok_or_else(|| ApiError::validation(vec![FieldError::missing("postcode")]))?;
    Postcode::parse(raw).ok_or_else(|| {
        ApiError::validation(vec![
            FieldError::new(
                "postcode",
                "invalid-postcode",
                Text::new(
                    "is geen Nederlandse of Belgische postcode",
                    "n'est pas un code postal néerlandais ou belge",
                ),
            )
            .with_value(raw),
        ])
    })
}
