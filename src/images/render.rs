//! Renditions: decode an original, turn it upright, and make the four sizes as JPEG (and,
//! in a second phase, WebP). CPU work only: callers run it on a blocking thread.
//!
//! - JPEG originals decode with `jpeg-decoder`'s DCT scaling (shrink-on-load): a 12-MP
//!   photo for a 1600-pixel rendition decodes at half size, a quarter of the pixels, which
//!   is what makes libvips fast too. PNG and WebP decode with the `image` crate.
//! - The EXIF orientation is applied to the pixels; nothing of the original's metadata
//!   (EXIF with its GPS position, XMP, ICC, comments) is copied: the encoders write pixels
//!   only.
//! - Resizing uses `fast_image_resize` (SIMD, Lanczos3), 5 to 20 times faster than the
//!   `image` crate's own resize in its published benchmarks.
//! - Each size is resized from the next larger one, not from the whole image.
//! - JPEG at quality 82 (`jpeg-encoder`, with AVX2: twice as fast as `image`'s encoder on
//!   the benchmark's photo); WebP at quality 80 (`libwebp` through `webp`, lossy: `image`'s
//!   own WebP encoder is lossless only, several times larger for photos), at libwebp's
//!   fastest method.

use std::io::Cursor;

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, RgbImage};

use super::check::{self, Limits, header_limits};
use crate::domain::image::{Format, Size};

/// One rendition, encoded.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub size: Size,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub bytes: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
#[error("the image cannot be decoded: {0}")]
pub struct DecodeError(String);

const JPEG_QUALITY: u8 = 82;
const WEBP_QUALITY: f32 = 80.0;
/// libwebp's effort, 0 (fastest) to 6 (its default, 4, takes 3.5 times as long for 11%
/// fewer bytes on the benchmark's photo; 0 still writes half the bytes of the JPEG).
const WEBP_METHOD: i32 = 0;

/// Decodes an original, upright, as RGB (transparency flattened onto white). `largest`
/// is the longest side the renditions need: a JPEG decodes at the smallest DCT scale that
/// still covers it.
///
/// Memory: the decoded image is at most [`Limits::max_decoded_bytes`] (checked at upload,
/// and again here for a job queued before that check); it is made 8-bit RGB first, at most
/// 3/4 of that beside it, and only then turned upright, a copy of the smaller image.
pub fn decode(bytes: &[u8], largest: u32) -> Result<RgbImage, DecodeError> {
    let format = image::guess_format(bytes).map_err(|e| DecodeError(e.to_string()))?;
    let (image, orientation) = match format {
        ImageFormat::Jpeg => decode_jpeg(bytes, largest)?,
        _ => {
            let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
            // What the codec allocates beside the pixels (a PNG's inflated colour profile)
            // stays within what the pixels may take (`check::header_limits`).
            reader.limits(header_limits(
                usize::try_from(Limits::default().max_decoded_bytes).unwrap_or(usize::MAX),
            ));
            let mut decoder = reader
                .into_decoder()
                .map_err(|e| DecodeError(e.to_string()))?;
            if decoder.total_bytes() > Limits::default().max_decoded_bytes {
                return Err(DecodeError("too large to decode".into()));
            }
            let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
            let image =
                DynamicImage::from_decoder(decoder).map_err(|e| DecodeError(e.to_string()))?;
            (image, orientation)
        }
    };
    let mut upright = DynamicImage::ImageRgb8(flatten(image));
    upright.apply_orientation(orientation);
    Ok(upright.into_rgb8())
}

fn decode_jpeg(bytes: &[u8], largest: u32) -> Result<(DynamicImage, Orientation), DecodeError> {
    let mut decoder = jpeg_decoder::Decoder::new(Cursor::new(bytes));
    decoder
        .read_info()
        .map_err(|e| DecodeError(e.to_string()))?;
    let info = decoder
        .info()
        .ok_or_else(|| DecodeError("no header".into()))?;
    let (width, height) = (u32::from(info.width), u32::from(info.height));
    // The coefficients stay at full size whatever the scale decoded at (the pixels are
    // smaller): bounded here for a job queued before the upload's check counted them.
    if check::progressive_coefficient_bytes(bytes)
        .is_some_and(|coefficients| coefficients > Limits::default().max_decoded_bytes)
    {
        return Err(DecodeError("too large to decode".into()));
    }
    // The sides that keep the longest one at `largest` (or the whole image if smaller).
    let (want_w, want_h) = fit(width, height, largest);
    decoder
        .scale(want_w as u16, want_h as u16)
        .map_err(|e| DecodeError(e.to_string()))?;
    let pixels = decoder.decode().map_err(|e| DecodeError(e.to_string()))?;
    let info = decoder
        .info()
        .ok_or_else(|| DecodeError("no header".into()))?;
    let (w, h) = (u32::from(info.width), u32::from(info.height));
    let orientation = decoder
        .exif_data()
        .and_then(Orientation::from_exif_chunk)
        .unwrap_or(Orientation::NoTransforms);
    let cut = || DecodeError("the pixels are cut short".into());
    let image = match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => {
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, pixels).ok_or_else(cut)?)
        }
        jpeg_decoder::PixelFormat::L8 => {
            DynamicImage::ImageLuma8(image::GrayImage::from_raw(w, h, pixels).ok_or_else(cut)?)
        }
        jpeg_decoder::PixelFormat::L16 => {
            let wide: Vec<u16> = pixels
                .chunks_exact(2)
                .map(|p| u16::from_be_bytes([p[0], p[1]]))
                .collect();
            DynamicImage::ImageLuma16(image::ImageBuffer::from_raw(w, h, wide).ok_or_else(cut)?)
        }
        jpeg_decoder::PixelFormat::CMYK32 => {
            let rgb: Vec<u8> = pixels
                .chunks_exact(4)
                .flat_map(|p| {
                    let k = 255 - u16::from(p[3]);
                    let channel = |c: u8| ((255 - u16::from(c)) * k / 255) as u8;
                    [channel(p[0]), channel(p[1]), channel(p[2])]
                })
                .collect();
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, rgb).ok_or_else(cut)?)
        }
    };
    Ok((image, orientation))
}

/// The sides of `width` x `height` scaled to fit `longest` (never up).
fn fit(width: u32, height: u32, longest: u32) -> (u32, u32) {
    let side = width.max(height);
    if side <= longest {
        return (width, height);
    }
    let scale =
        |v: u32| ((u64::from(v) * u64::from(longest)).div_ceil(u64::from(side)) as u32).max(1);
    (scale(width), scale(height))
}

/// RGB, with any transparency composed onto white (JPEG has none).
fn flatten(image: DynamicImage) -> RgbImage {
    if !image.color().has_alpha() {
        return image.into_rgb8();
    }
    let rgba = image.into_rgba8();
    let (w, h) = rgba.dimensions();
    RgbImage::from_fn(w, h, |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let over_white =
            |c: u8| ((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a))) / 255) as u8;
        image::Rgb([over_white(r), over_white(g), over_white(b)])
    })
}

/// The four sizes of an upright image in `format`.
pub fn renditions(image: &RgbImage, format: Format) -> Result<Vec<Rendered>, DecodeError> {
    encode(&resize(image)?, format)
}

/// An image resized to one of the sizes, not yet encoded.
#[derive(Clone, Debug)]
pub struct Resized {
    pub size: Size,
    pub width: u32,
    pub height: u32,
    /// RGB, 3 bytes a pixel, row by row.
    pub pixels: Vec<u8>,
}

fn failed(error: &dyn std::fmt::Display) -> DecodeError {
    DecodeError(error.to_string())
}

/// The four sizes of an upright image, in [`Size::ALL`] order. Each size is resized from
/// the one above it (at least 1.5 times as large, so Lanczos3 loses nothing visible),
/// which costs a fraction of resizing each from the whole image.
pub fn resize(image: &RgbImage) -> Result<Vec<Resized>, DecodeError> {
    let (width, height) = image.dimensions();
    let mut resizer = Resizer::new();
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    let mut made: Vec<Resized> = Vec::with_capacity(Size::ALL.len());
    for size in Size::ALL.into_iter().rev() {
        let (w, h) = size.fit(width, height);
        let (above, above_w, above_h) = match made.last() {
            Some(above) => (above.pixels.as_slice(), above.width, above.height),
            None => (image.as_raw().as_slice(), width, height),
        };
        let pixels = if (w, h) == (above_w, above_h) {
            above.to_vec()
        } else {
            let source =
                ImageRef::new(above_w, above_h, above, PixelType::U8x3).map_err(|e| failed(&e))?;
            let mut target = Image::new(w, h, PixelType::U8x3);
            resizer
                .resize(&source, &mut target, &options)
                .map_err(|e| failed(&e))?;
            target.into_vec()
        };
        made.push(Resized {
            size,
            width: w,
            height: h,
            pixels,
        });
    }
    made.reverse();
    Ok(made)
}

/// Encodes resized images in `format`.
pub fn encode(resized: &[Resized], format: Format) -> Result<Vec<Rendered>, DecodeError> {
    resized
        .iter()
        .map(|one| {
            let (w, h, pixels) = (one.width, one.height, &one.pixels);
            let bytes = match format {
                Format::Jpeg => {
                    let mut out = Vec::new();
                    // Sides are at most 1,600 pixels (`Size::longest_side`): they fit a u16.
                    jpeg_encoder::Encoder::new(&mut out, JPEG_QUALITY)
                        .encode(pixels, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
                        .map_err(|e| failed(&e))?;
                    out
                }
                Format::Webp => {
                    let mut config =
                        webp::WebPConfig::new().map_err(|()| failed(&"no WebP configuration"))?;
                    config.quality = WEBP_QUALITY;
                    config.method = WEBP_METHOD;
                    webp::Encoder::from_rgb(pixels, w, h)
                        .encode_advanced(&config)
                        .map_err(|e| failed(&format!("{e:?}")))?
                        .to_vec()
                }
            };
            Ok(Rendered {
                size: one.size,
                format,
                width: w,
                height: h,
                bytes,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn photo(width: u32, height: u32) -> RgbImage {
        RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])
        })
    }

    #[test]
    fn four_sizes_within_their_bounds_in_both_formats() {
        let image = photo(1000, 600);
        for format in Format::ALL {
            let made = renditions(&image, format).unwrap();
            let sides: Vec<(u32, u32)> = made.iter().map(|r| (r.width, r.height)).collect();
            assert_eq!(sides, [(200, 120), (500, 300), (1000, 600), (1000, 600)]);
            for rendition in &made {
                let decoded = image::load_from_memory(&rendition.bytes).unwrap();
                assert_eq!(
                    (decoded.width(), decoded.height()),
                    (rendition.width, rendition.height)
                );
            }
        }
    }

    #[test]
    fn a_jpeg_decodes_scaled_down_to_what_is_needed() {
        let mut bytes = Vec::new();
        photo(3200, 2400)
            .write_to(&mut Cursor::new(&mut bytes), ImageFormat::Jpeg)
            .unwrap();
        let decoded = decode(&bytes, 1600).unwrap();
        assert_eq!(
            decoded.dimensions(),
            (1600, 1200),
            "half size, by DCT scaling"
        );
        let whole = decode(&bytes, 4000).unwrap();
        assert_eq!(whole.dimensions(), (3200, 2400));
    }

    #[test]
    fn transparency_goes_onto_white() {
        let clear = image::RgbaImage::from_pixel(4, 4, image::Rgba([0, 0, 0, 0]));
        let mut bytes = Vec::new();
        clear
            .write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png)
            .unwrap();
        let decoded = decode(&bytes, 100).unwrap();
        assert_eq!(decoded.get_pixel(0, 0).0, [255, 255, 255]);
    }
}
