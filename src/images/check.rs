//! What an upload must be before anything is stored: JPEG, PNG or WebP by its bytes (not by
//! what the client says it is), complete, within the byte limit, and with dimensions that
//! cannot blow up on decoding. Every check reads only headers and the file's structure, so
//! it costs microseconds on the request path; the full decode runs in the rendition pool,
//! and an image that fails there is removed (`usecase::images`).

use std::io::Cursor;

use image::{ImageDecoder, ImageFormat, ImageReader};

use crate::domain::field_error::FieldError;
use crate::domain::locale::Text;

/// The formats Souk takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Jpeg,
    Png,
    Webp,
}

impl Kind {
    pub fn content_type(self) -> &'static str {
        match self {
            Kind::Jpeg => "image/jpeg",
            Kind::Png => "image/png",
            Kind::Webp => "image/webp",
        }
    }

    pub fn from_content_type(content_type: &str) -> Option<Kind> {
        match crate::domain::image::media_type(content_type).as_str() {
            "image/jpeg" | "image/jpg" | "image/pjpeg" => Some(Kind::Jpeg),
            "image/png" => Some(Kind::Png),
            "image/webp" => Some(Kind::Webp),
            _ => None,
        }
    }

    fn image_format(self) -> ImageFormat {
        match self {
            Kind::Jpeg => ImageFormat::Jpeg,
            Kind::Png => ImageFormat::Png,
            Kind::Webp => ImageFormat::WebP,
        }
    }
}

/// The bounds of an upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest file, in bytes (`SOUK_MAX_IMAGE_BYTES`).
    pub max_bytes: usize,
    /// The most pixels (width x height). 50 megapixels is above any phone camera.
    pub max_pixels: u64,
    /// The most bytes the decoded image takes (pixels x bytes a pixel), which bounds the
    /// memory of one rendition (`render::decode`): an 8-bit RGBA image of 50 megapixels,
    /// or a 16-bit one of 25, takes 200 MB. Pixels alone do not bound it: a 16-bit RGBA
    /// pixel takes 8 bytes, and a progressive JPEG's decoder keeps its coefficients
    /// besides ([`progressive_coefficient_bytes`]).
    pub max_decoded_bytes: u64,
    /// The longest side, in pixels.
    pub max_side: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 20 * 1024 * 1024,
            max_pixels: 50_000_000,
            max_decoded_bytes: 200_000_000,
            max_side: 20_000,
        }
    }
}

/// An upload that passed the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    pub kind: Kind,
    pub width: u32,
    pub height: u32,
}

/// Why an upload is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the file is larger than {max} bytes")]
    TooLarge { max: usize },
    #[error("the file is not an image")]
    NotAnImage,
    #[error("{0} images are not taken: send JPEG, PNG or WebP")]
    Unsupported(String),
    #[error("the content type says {declared} but the bytes are {actual}")]
    ContentTypeLies {
        declared: String,
        actual: &'static str,
    },
    #[error("the file is cut off: its end is missing")]
    Truncated,
    #[error("{width} x {height} pixels is more than this server decodes")]
    TooManyPixels { width: u32, height: u32 },
}

impl Refusal {
    /// The refusal as a field error on `field` (the input that held the file).
    pub fn field_error(&self, field: &str) -> FieldError {
        let (code, text) = match self {
            Refusal::TooLarge { max } => (
                "too-large",
                Text::new(
                    format!("is groter dan {max} bytes"),
                    format!("dépasse {max} octets"),
                ),
            ),
            Refusal::NotAnImage => (
                "not-an-image",
                Text::new("is geen afbeelding", "n'est pas une image"),
            ),
            Refusal::Unsupported(format) => (
                "unsupported-format",
                Text::new(
                    format!("{format} wordt niet aangenomen: stuur JPEG, PNG of WebP"),
                    format!("{format} n'est pas accepté : envoyez du JPEG, PNG ou WebP"),
                ),
            ),
            Refusal::ContentTypeLies { declared, actual } => (
                "content-type-mismatch",
                Text::new(
                    format!("het inhoudstype zegt {declared}, maar de bytes zijn {actual}"),
                    format!("le type de contenu indique {declared}, mais les octets sont {actual}"),
                ),
            ),
            Refusal::Truncated => (
                "truncated",
                Text::new(
                    "is afgebroken: het einde van het bestand ontbreekt",
                    "est tronqué : la fin du fichier manque",
                ),
            ),
            Refusal::TooManyPixels { width, height } => (
                "too-many-pixels",
                Text::new(
                    format!("{width} x {height} pixels is te groot om te verwerken"),
                    format!("{width} x {height} pixels est trop grand pour être traité"),
                ),
            ),
        };
        FieldError::new(field, code, text)
    }
}

/// Checks an upload; `declared` is the content type the client gave (a multipart part's,
/// or the request's), if it named an image type.
pub fn check(bytes: &[u8], declared: Option<&str>, limits: Limits) -> Result<Checked, Refusal> {
    unreadable_if_it_panics(|| check_bytes(bytes, declared, limits))
}

/// The image crate's decoders read untrusted bytes: one that panics on some input has met
/// an image it cannot read, which is the uploader's 400, not a server error. (The
/// renditions catch their decoder's panics the same way.)
fn unreadable_if_it_panics(
    check: impl FnOnce() -> Result<Checked, Refusal> + std::panic::UnwindSafe,
) -> Result<Checked, Refusal> {
    std::panic::catch_unwind(check).unwrap_or(Err(Refusal::NotAnImage))
}

fn check_bytes(bytes: &[u8], declared: Option<&str>, limits: Limits) -> Result<Checked, Refusal> {
    if bytes.len() > limits.max_bytes {
        return Err(Refusal::TooLarge {
            max: limits.max_bytes,
        });
    }
    let kind = match image::guess_format(bytes) {
        Ok(ImageFormat::Jpeg) => Kind::Jpeg,
        Ok(ImageFormat::Png) => Kind::Png,
        Ok(ImageFormat::WebP) => Kind::Webp,
        Ok(other) => {
            let name = other.extensions_str().first().copied().unwrap_or("these");
            return Err(Refusal::Unsupported(name.to_uppercase()));
        }
        Err(_) => return Err(Refusal::NotAnImage),
    };
    if let Some(declared) = declared
        && Kind::from_content_type(declared) != Some(kind)
    {
        return Err(Refusal::ContentTypeLies {
            declared: declared.to_owned(),
            actual: kind.content_type(),
        });
    }
    let complete = match kind {
        Kind::Jpeg => jpeg_is_complete(bytes),
        Kind::Png => png_is_complete(bytes),
        Kind::Webp => webp_is_complete(bytes),
    };
    if !complete {
        return Err(Refusal::Truncated);
    }
    let decoder = header(bytes, kind, header_budget(limits.max_bytes))?;
    let (width, height) = decoder.dimensions();
    let coefficients = match kind {
        Kind::Jpeg => progressive_coefficient_bytes(bytes).unwrap_or(0),
        Kind::Png | Kind::Webp => 0,
    };
    if width == 0
        || height == 0
        || width > limits.max_side
        || height > limits.max_side
        || u64::from(width) * u64::from(height) > limits.max_pixels
        || decoder.total_bytes().saturating_add(coefficients) > limits.max_decoded_bytes
    {
        return Err(Refusal::TooManyPixels { width, height });
    }
    Ok(Checked {
        kind,
        width,
        height,
    })
}

/// What reading an upload's header may allocate: four times the upload's bound. A PNG's
/// text chunks cost up to three times their size while they are read (buffers that grow by
/// doubling, then the text), so any upload within its bound reads; a colour profile (iCCP),
/// which is inflated with the header, and whose 1 MiB can inflate to 1 GiB, stays within it.
fn header_budget(max_bytes: usize) -> usize {
    max_bytes.saturating_mul(4)
}

/// The decoder of an upload, its header read, allocating at most `budget` (the PNG decoder
/// drops a colour profile that would inflate past it, and reads on).
fn header(bytes: &[u8], kind: Kind, budget: usize) -> Result<impl ImageDecoder + '_, Refusal> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), kind.image_format());
    reader.limits(header_limits(budget));
    // A header that does not parse (a bad checksum, nonsense fields) is no image.
    reader.into_decoder().map_err(|_| Refusal::NotAnImage)
}

/// The image crate's limits for reading a header: at most `bytes` allocated (the pixels
/// are checked by the caller, from the dimensions).
pub fn header_limits(bytes: usize) -> image::Limits {
    let mut header = image::Limits::no_limits();
    header.max_alloc = Some(u64::try_from(bytes).unwrap_or(u64::MAX));
    header
}

/// At most the bytes a progressive JPEG's decoder (jpeg-decoder's, which renders) keeps
/// beside the pixels: each component's DCT coefficients at full resolution, two bytes
/// each, 64 to an 8x8 block, whatever scale it decodes at. Counted as if no component were
/// subsampled, each side padded by the widest MCU's four blocks: a 50-megapixel
/// progressive JPEG keeps up to 300 MB. `None` for a JPEG that is not progressive (a
/// baseline one is decoded a row of blocks at a time), or whose header jpeg-decoder
/// cannot read (its decode fails then too). The header is jpeg-decoder's reading, junk
/// between markers skipped as it skips it: a reading of one's own that gave up on a
/// stray byte let such a JPEG through.
pub fn progressive_coefficient_bytes(bytes: &[u8]) -> Option<u64> {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    decoder.read_info().ok()?;
    let info = decoder.info()?;
    if info.coding_process != jpeg_decoder::CodingProcess::DctProgressive {
        return None;
    }
    let components = info.pixel_format.pixel_bytes() as u64;
    let blocks = |side: u16| u64::from(side).div_ceil(8) + 4;
    Some(components * blocks(info.width) * blocks(info.height) * 64 * 2)
}

/// A JPEG ends with its EOI marker (FF D9) after the start of its scan data; some cameras
/// append a trailer after it, so the last EOI anywhere after the first SOS counts. The
/// segments before the scan are walked by their lengths: an EXIF segment often carries a
/// whole thumbnail, with an SOS and an EOI of its own, which a search for the first SOS
/// took for the image's (a phone photo cut in half passed, and failed to render).
fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let mut at = 2;
    let scan = loop {
        // Junk and fill bytes before a marker are passed over, as decoders pass them.
        while bytes.get(at).is_some_and(|&byte| byte != 0xFF) {
            at += 1;
        }
        while bytes.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        let Some(&marker) = bytes.get(at + 1) else {
            return false;
        };
        match marker {
            0xDA => break at,
            0xD9 => return false,
            // Markers without a length (a stuffed zero is junk here).
            0x00 | 0x01 | 0xD0..=0xD8 => at += 2,
            _ => {
                let Some(&[high, low]) = bytes.get(at + 2..at + 4) else {
                    return false;
                };
                at += 2 + usize::from(u16::from_be_bytes([high, low]));
            }
        }
    };
    bytes[scan..].windows(2).any(|w| w == [0xFF, 0xD9])
}

/// A PNG ends with its IEND chunk: length 0, the type, and its fixed CRC.
fn png_is_complete(bytes: &[u8]) -> bool {
    bytes.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xAE, 0x42, 0x60, 0x82])
}

/// A WebP is a RIFF file whose header gives its length: all of it must be there.
fn webp_is_complete(bytes: &[u8]) -> bool {
    if bytes.len() < 12 {
        return false;
    }
    let declared = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
    bytes.len() >= declared.saturating_add(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_that_panics_refuses_the_image() {
        let refused = unreadable_if_it_panics(|| panic!("a decoder's bug"));
        assert!(matches!(refused, Err(Refusal::NotAnImage)), "{refused:?}");
        let kept = unreadable_if_it_panics(|| Err(Refusal::Truncated));
        assert!(matches!(kept, Err(Refusal::Truncated)), "{kept:?}");
    }

    fn encoded(format: ImageFormat, width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, format).unwrap();
        out.into_inner()
    }

    fn jpeg(
        width: u16,
        height: u16,
        progressive: bool,
        sampling: jpeg_encoder::SamplingFactor,
    ) -> Vec<u8> {
        let pixels: Vec<u8> = (0..usize::from(width) * usize::from(height) * 3)
            .map(|i| (i % 251) as u8)
            .collect();
        let mut out = Vec::new();
        let mut encoder = jpeg_encoder::Encoder::new(&mut out, 80);
        encoder.set_progressive(progressive);
        encoder.set_sampling_factor(sampling);
        encoder
            .encode(&pixels, width, height, jpeg_encoder::ColorType::Rgb)
            .unwrap();
        out
    }

    /// A progressive JPEG's decoder keeps every coefficient besides the pixels: both count
    /// towards the decoded bytes (a 50-megapixel one took 1.5 times the bound).
    #[test]
    fn a_progressive_jpeg_counts_its_coefficients() {
        use jpeg_encoder::SamplingFactor::{F_1_1, F_2_2};
        let full = jpeg(500, 500, true, F_1_1);
        // 63 blocks a side, four more for the padding, for each of three components.
        let bound = 3 * 67 * 67 * 128;
        assert_eq!(progressive_coefficient_bytes(&full), Some(bound));
        // Subsampled chroma keeps fewer: the bound is the same.
        assert_eq!(
            progressive_coefficient_bytes(&jpeg(500, 500, true, F_2_2)),
            Some(bound)
        );
        let baseline = jpeg(500, 500, false, F_1_1);
        assert_eq!(progressive_coefficient_bytes(&baseline), None);
        // A stray byte after the first segment, which decoders skip, hides nothing.
        let mut strayed = full.clone();
        let first_segment_end = 4 + usize::from(u16::from_be_bytes([full[4], full[5]]));
        strayed.insert(first_segment_end, 0);
        assert_eq!(progressive_coefficient_bytes(&strayed), Some(bound));
        // Pixels of 750,000 bytes: within a bound of 1 MB as a baseline JPEG; with the
        // coefficients beside them, not.
        let limits = Limits {
            max_decoded_bytes: 1_000_000,
            ..Limits::default()
        };
        assert!(check(&baseline, None, limits).is_ok());
        for progressive in [&full, &strayed] {
            assert_eq!(
                check(progressive, None, limits),
                Err(Refusal::TooManyPixels {
                    width: 500,
                    height: 500
                })
            );
        }
        // Cut short or not a JPEG at all: no frame to count.
        assert_eq!(progressive_coefficient_bytes(&full[..20]), None);
        assert_eq!(progressive_coefficient_bytes(b"\xFF\xD8\xFF"), None);
    }

    #[test]
    fn good_images_pass_with_their_dimensions() {
        for (format, kind) in [
            (ImageFormat::Jpeg, Kind::Jpeg),
            (ImageFormat::Png, Kind::Png),
            (ImageFormat::WebP, Kind::Webp),
        ] {
            let bytes = encoded(format, 64, 48);
            let checked = check(&bytes, Some(kind.content_type()), Limits::default()).unwrap();
            assert_eq!(
                checked,
                Checked {
                    kind,
                    width: 64,
                    height: 48
                }
            );
            assert!(check(&bytes, None, Limits::default()).is_ok());
        }
    }

    #[test]
    fn bad_uploads_are_refused_for_what_they_are() {
        let limits = Limits::default();
        let jpeg = encoded(ImageFormat::Jpeg, 64, 48);
        let png = encoded(ImageFormat::Png, 64, 48);
        let webp = encoded(ImageFormat::WebP, 64, 48);
        assert_eq!(
            check(b"<html>hello</html>", None, limits),
            Err(Refusal::NotAnImage)
        );
        assert_eq!(check(b"", None, limits), Err(Refusal::NotAnImage));
        assert!(matches!(
            check(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", None, limits),
            Err(Refusal::Unsupported(_))
        ));
        assert!(matches!(
            check(&png, Some("image/jpeg"), limits),
            Err(Refusal::ContentTypeLies { .. })
        ));
        for whole in [&jpeg, &png, &webp] {
            let cut = &whole[..whole.len() * 2 / 3];
            assert_eq!(check(cut, None, limits), Err(Refusal::Truncated));
        }
        let small = Limits {
            max_bytes: 100,
            ..limits
        };
        assert_eq!(
            check(&jpeg, None, small),
            Err(Refusal::TooLarge { max: 100 })
        );
        let few_pixels = Limits {
            max_pixels: 1000,
            ..limits
        };
        assert_eq!(
            check(&jpeg, None, few_pixels),
            Err(Refusal::TooManyPixels {
                width: 64,
                height: 48
            })
        );
    }

    /// A decompression bomb: a small PNG whose header claims 60,000 x 60,000 pixels.
    #[test]
    fn a_bomb_is_refused_from_its_header() {
        let mut png = encoded(ImageFormat::Png, 1, 1);
        // IHDR's width and height sit at bytes 16..24; its CRC is not checked for the
        // dimensions, but is recomputed to be a well-formed file.
        png[16..20].copy_from_slice(&60_000u32.to_be_bytes());
        png[20..24].copy_from_slice(&60_000u32.to_be_bytes());
        let crc = crc32(&png[12..29]);
        png[29..33].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(
            check(&png, Some("image/png"), Limits::default()),
            Err(Refusal::TooManyPixels {
                width: 60_000,
                height: 60_000
            })
        );
    }

    /// A decompression bomb in a PNG's colour profile, which the header's reading
    /// inflates: 1 MiB of profile from a few KiB of upload is not inflated under a budget
    /// of 64 KiB (the image is taken without its profile, as every rendition is).
    #[test]
    fn a_colour_profile_bomb_is_not_inflated() {
        use std::io::Write;

        let png = encoded(ImageFormat::Png, 1, 1);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        zlib.write_all(&vec![0u8; 1 << 20]).unwrap();
        let mut profile = b"bomb\0\0".to_vec();
        profile.extend(zlib.finish().unwrap());
        // The chunk goes right after IHDR (bytes 8..33), before IDAT, as iCCP must.
        let mut chunk = (profile.len() as u32).to_be_bytes().to_vec();
        chunk.extend(b"iCCP");
        chunk.extend(&profile);
        let crc = crc32(&chunk[4..]);
        chunk.extend(crc.to_be_bytes());
        let bomb = [&png[..33], &chunk, &png[33..]].concat();
        let limits = Limits {
            max_bytes: 64 * 1024,
            ..Limits::default()
        };
        assert!(bomb.len() < limits.max_bytes, "{} bytes", bomb.len());
        let Ok(mut bounded) = header(&bomb, Kind::Png, limits.max_bytes) else {
            panic!("the header reads");
        };
        assert_eq!(bounded.icc_profile().unwrap(), None, "not inflated");
        assert!(check(&bomb, Some("image/png"), limits).is_ok());
        // Under a bound it fits, the profile is read whole: the chunk is well formed.
        let Ok(mut roomy) = header(&bomb, Kind::Png, 2 << 20) else {
            panic!("the header reads");
        };
        assert_eq!(roomy.icc_profile().unwrap().map(|p| p.len()), Some(1 << 20));
    }

    /// A PNG with 8 MiB of text (an editor's metadata) is an image within the default
    /// bound: reading its header costs about three times that, within the budget.
    #[test]
    fn a_png_with_much_text_is_taken() {
        let png = encoded(ImageFormat::Png, 1, 1);
        let mut chunk = ((8u32 << 20) + 8).to_be_bytes().to_vec();
        chunk.extend(b"tEXtComment\0");
        chunk.resize(chunk.len() + (8 << 20), b'x');
        let crc = crc32(&chunk[4..]);
        chunk.extend(crc.to_be_bytes());
        let texty = [&png[..33], &chunk, &png[33..]].concat();
        assert!(texty.len() < Limits::default().max_bytes);
        assert_eq!(
            check(&texty, Some("image/png"), Limits::default()).map(|c| c.width),
            Ok(1)
        );
    }

    /// A small PNG whose header claims 7,000 x 7,000 pixels of 16-bit RGBA: fewer than the
    /// most pixels, but 392 MB decoded.
    #[test]
    fn a_deep_image_is_refused_by_its_decoded_size() {
        let mut png = encoded(ImageFormat::Png, 1, 1);
        png[16..20].copy_from_slice(&7_000u32.to_be_bytes());
        png[20..24].copy_from_slice(&7_000u32.to_be_bytes());
        let set_depth_and_colour = |png: &mut Vec<u8>, depth: u8, colour: u8| {
            png[24] = depth;
            png[25] = colour;
            let crc = crc32(&png[12..29]);
            png[29..33].copy_from_slice(&crc.to_be_bytes());
        };
        // Colour type 6 is RGBA; 2 is RGB, 8 bits: 147 MB decoded, within the bound.
        set_depth_and_colour(&mut png, 16, 6);
        assert_eq!(
            check(&png, Some("image/png"), Limits::default()),
            Err(Refusal::TooManyPixels {
                width: 7_000,
                height: 7_000
            })
        );
        set_depth_and_colour(&mut png, 8, 2);
        assert!(check(&png, Some("image/png"), Limits::default()).is_ok());
    }

    /// A photo whose EXIF segment carries a thumbnail (a whole JPEG of its own, SOS and EOI
    /// included), cut off in its scan: truncated, not taken because the thumbnail is
    /// whole. Whole, it is taken.
    #[test]
    fn a_cut_off_photo_with_a_whole_thumbnail_is_truncated() {
        let sampling = jpeg_encoder::SamplingFactor::R_4_2_0;
        let (photo, thumbnail) = (jpeg(64, 48, false, sampling), jpeg(8, 6, false, sampling));
        let mut exif = b"Exif\0\0".to_vec();
        exif.extend(&thumbnail);
        let length = u16::try_from(exif.len() + 2).unwrap().to_be_bytes();
        let with_thumbnail = [&[0xFF, 0xD8, 0xFF, 0xE1], &length[..], &exif, &photo[2..]].concat();
        assert!(check(&with_thumbnail, Some("image/jpeg"), Limits::default()).is_ok());
        let cut = &with_thumbnail[..with_thumbnail.len() - 40];
        assert_eq!(
            check(cut, Some("image/jpeg"), Limits::default()).map(|c| c.width),
            Err(Refusal::Truncated)
        );
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for byte in bytes {
            crc ^= u32::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
}
