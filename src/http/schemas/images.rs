//! The schemas of images: their list, upload, import, order and description (a part of
//! [`super::all`], kept apart to keep each file readable).

use serde_json::{Value, json};

use super::{described, list_of, object};

/// The schemas, with prefixed keys under `prefix`, given `all`'s `link` and its builder of
/// `_embedded` members.
pub(super) fn schemas(prefix: &str, link: &Value, embedded: &dyn Fn(&str, &str) -> Value) -> Value {
    json!({
        "ImageList": object(
            json!({
                "_links": object(json!({"self": link, format!("{prefix}:advertisement"): link}), &[]),
                "_embedded": embedded("advertisement-image", "Image"),
            }),
            &["_embedded"],
        ),
        "ImageBytes": {"type": "string", "format": "binary", "description": "A JPEG, PNG or WebP file."},
        "ImageUpload": described(
            "One or more files (any field name), and optionally `replaceAll`.",
            object(
                json!({
                    "file": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    "replaceAll": {"type": "string", "enum": ["true", "false"]},
                }),
                &[],
            ),
        ),
        "ImageUrls": object(
            json!({
                "urls": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 24},
                "replaceAll": {"type": "boolean"},
            }),
            &["urls"],
        ),
        "ImageOrder": object(
            json!({"mediaIds": {"type": "array", "items": {"type": "string"}}}),
            &["mediaIds"],
        ),
        "ImageMeta": object(
            json!({
                "_links": object(
                    json!({
                        "self": link,
                        "describedby": link,
                        "curies": list_of("Curie"),
                        format!("{prefix}:image-blob"): link,
                    }),
                    &["self"],
                ),
                "width": {"type": "integer", "minimum": 1},
                "height": {"type": "integer", "minimum": 1},
                "contentType": {"type": "string"},
                "bytes": {"type": "integer", "minimum": 1},
                "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            }),
            &["width", "height", "contentType", "bytes", "sha256"],
        ),
        "Image": object(
            json!({
                "_links": object(
                    json!({
                        "self": link,
                        "small": link, "medium": link, "large": link, "xlarge": link,
                        format!("{prefix}:image-blob"): link,
                        format!("{prefix}:image-meta"): link,
                        format!("{prefix}:advertisement"): link,
                        "describedby": link,
                        "curies": list_of("Curie"),
                    }),
                    &["self"],
                ),
                "mediaId": {"type": "string", "format": "uuid"},
                "imageId": {"type": "integer", "minimum": 1, "deprecated": true},
                "status": {"type": "string", "enum": ["processing", "available"]},
            }),
            &["mediaId", "imageId", "status"],
        ),
    })
}
