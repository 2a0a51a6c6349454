//! The pictures of seeded ads: a few drawn photos (a product on a table against a wall),
//! rendered once by the code that renders uploads and stored once each. Every seeded image
//! shows one of them: its renditions point at these shared, content-addressed blobs, so a
//! million ads need a handful of blobs and a bulk count of references, not a million files.

use image::{Rgb, RgbImage};

use crate::domain::image::Format;
use crate::images::blobs::Blobs;
use crate::images::render;
use crate::store::Db;
use crate::store::renditions::NewRendition;
use crate::usecase::renditions;

/// One picture and its renditions, as stored.
#[derive(Clone, Debug)]
pub struct Picture {
    pub width: u32,
    pub height: u32,
    /// The largest rendition's length and SHA-256: it stands for the original, which the
    /// seed does not keep (neither does an upload, once its renditions exist).
    pub bytes: usize,
    pub sha256: String,
    pub renditions: Vec<NewRendition>,
}

/// Each picture's sides and its product's colour: landscape and portrait, as phones take them.
const PICTURES: &[(u32, u32, [u8; 3])] = &[
    (1200, 900, [200, 40, 40]),
    (900, 1200, [30, 110, 190]),
    (1200, 800, [230, 170, 30]),
    (1000, 1000, [40, 150, 80]),
    (1200, 900, [120, 60, 160]),
    (900, 1200, [60, 60, 60]),
];

/// Draws the pictures, renders their JPEG renditions and stores the bytes, each blob held
/// first (for `renditions::BLOB_HOLD_SECS`) so that no sweep frees it before the seeded
/// renditions refer to it (storing them again is harmless: a blob's name is its content).
pub async fn store(db: &Db, blobs: &Blobs, now: i64) -> anyhow::Result<Vec<Picture>> {
    let rendered = tokio::task::spawn_blocking(|| {
        PICTURES
            .iter()
            .map(|&(width, height, colour)| {
                let made = render::renditions(&draw(width, height, colour), Format::Jpeg)?;
                Ok((width, height, made))
            })
            .collect::<Result<Vec<_>, render::DecodeError>>()
    })
    .await??;
    let mut pictures = Vec::with_capacity(rendered.len());
    for (width, height, made) in rendered {
        let renditions = renditions::store_blobs(db, blobs, made, now)
            .await?
            .ok_or_else(|| anyhow::anyhow!("a picture's blob is being deleted: seed again"))?;
        let largest = renditions
            .last()
            .ok_or_else(|| anyhow::anyhow!("a picture without renditions"))?;
        pictures.push(Picture {
            width,
            height,
            bytes: largest.bytes,
            sha256: largest.sha256.clone(),
            renditions,
        });
    }
    Ok(pictures)
}

/// A product (a rounded block of `colour`, lit from the upper left) on a wooden table in
/// front of a pale wall, with its shadow.
fn draw(width: u32, height: u32, colour: [u8; 3]) -> RgbImage {
    let (w, h) = (width as f32, height as f32);
    let horizon = h * 0.62;
    let (cx, cy) = (w * 0.5, h * 0.5);
    let (half_w, half_h) = (w * 0.22, h * 0.2);
    RgbImage::from_fn(width, height, |x, y| {
        let (x, y) = (x as f32, y as f32);
        // Wall: pale, lighter towards the top; table: warm wood with a grain.
        let mut pixel = if y < horizon {
            let light = 1.0 - 0.15 * (y / horizon);
            [236.0 * light, 232.0 * light, 222.0 * light]
        } else {
            let grain = ((y * 0.9 + (x * 0.013).sin() * 6.0).sin() * 0.5 + 0.5) * 18.0;
            [150.0 + grain, 105.0 + grain * 0.7, 65.0 + grain * 0.4]
        };
        // The shadow on the table, an ellipse under the product.
        let (sx, sy) = (
            (x - cx - w * 0.03) / (half_w * 1.1),
            (y - (cy + half_h)) / (h * 0.05),
        );
        let shadow = sx * sx + sy * sy;
        if shadow < 1.0 {
            let dark = 0.55 + 0.45 * shadow;
            pixel = pixel.map(|c| c * dark);
        }
        // The product: a superellipse, shaded by its distance from the light.
        let (px, py) = ((x - cx) / half_w, (y - cy) / half_h);
        if px.powi(4) + py.powi(4) < 1.0 {
            let light = (1.15 - 0.35 * (px + py + 2.0) / 4.0 * 2.0).clamp(0.5, 1.2);
            pixel = colour.map(|c| f32::from(c) * light);
        }
        Rgb(pixel.map(|c| c.clamp(0.0, 255.0) as u8))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::blobs::sha256_hex;
    use crate::store::{migrations, renditions};

    #[tokio::test]
    async fn pictures_are_stored_once_with_four_renditions() {
        let (db, dir) = migrations::migrated_sqlite().await;
        let blobs = Blobs::local(dir.path()).unwrap();
        let pictures = store(&db, &blobs, 0).await.unwrap();
        assert_eq!(pictures.len(), PICTURES.len());
        for picture in &pictures {
            assert_eq!(picture.renditions.len(), 4);
            for rendition in &picture.renditions {
                let stored = blobs.get_blob(&rendition.sha256).await.unwrap();
                assert_eq!(sha256_hex(&stored), rendition.sha256);
                assert_eq!(stored.len(), rendition.bytes);
                // Held, so that no sweep deletes it before the seed refers to it.
                let sha256 = rendition.sha256.clone();
                let held = db
                    .read(move |conn| {
                        Box::pin(async move {
                            conn.column::<i64>(
                                "SELECT held_until FROM image_blobs WHERE sha256 = $1",
                                crate::params![sha256],
                            )
                            .await
                        })
                    })
                    .await
                    .unwrap();
                assert_eq!(held, [renditions::BLOB_HOLD_SECS]);
            }
        }
        let again = store(&db, &blobs, 0).await.unwrap();
        assert_eq!(
            again[0].sha256, pictures[0].sha256,
            "the same bytes every time"
        );
        // Equal renditions are one blob (a 1000-pixel picture's large and xlarge).
        let mut distinct: Vec<&str> = pictures
            .iter()
            .flat_map(|p| p.renditions.iter().map(|r| r.sha256.as_str()))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(blobs.keys().await.unwrap().len(), distinct.len());
    }
}
