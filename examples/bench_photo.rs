//! Writes the photo of the benchmark's R6 (bench/run): a 12-megapixel JPEG as a phone
//! takes it, 4000 x 3000 stored sideways with EXIF orientation 6 and a GPS position, with
//! the fine detail (noise over gradients) that makes a real photo's entropy data, and so
//! its decoding, as costly as a camera's.
//!
//!     cargo run --release --example bench_photo -- PATH

fn main() {
    let path = std::env::args().nth(1).expect("usage: bench_photo PATH");
    let (width, height) = (4000u32, 3000u32);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        // xorshift noise: sensor grain, so the JPEG is about as large as a phone's.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let grain = (state % 24) as i32 - 12;
        let base = [
            (x * 255 / width) as i32,
            (y * 255 / height) as i32,
            (((x / 97 + y / 61) % 2) * 120 + 60) as i32,
        ];
        image::Rgb(base.map(|c| (c + grain).clamp(0, 255) as u8))
    });
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90)
        .encode_image(&image)
        .expect("encode");
    let exif = exif_orientation_6_with_gps();
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&exif);
    out.extend_from_slice(&jpeg[2..]);
    std::fs::write(&path, &out).expect("write the photo");
    println!("{path}: {width} x {height}, {} bytes", out.len());
}

/// `Exif\0\0` and a little-endian TIFF: IFD0 with Orientation 6 and a GPS IFD (52°22'N).
fn exif_orientation_6_with_gps() -> Vec<u8> {
    let mut tiff: Vec<u8> = b"II*\0".to_vec();
    tiff.extend_from_slice(&8u32.to_le_bytes());
    let entry = |tag: u16, kind: u16, count: u32, value: u32| {
        let mut e = tag.to_le_bytes().to_vec();
        e.extend_from_slice(&kind.to_le_bytes());
        e.extend_from_slice(&count.to_le_bytes());
        e.extend_from_slice(&value.to_le_bytes());
        e
    };
    tiff.extend_from_slice(&2u16.to_le_bytes());
    tiff.extend(entry(0x0112, 3, 1, 6));
    tiff.extend(entry(0x8825, 4, 1, 38));
    tiff.extend_from_slice(&0u32.to_le_bytes());
    tiff.extend_from_slice(&2u16.to_le_bytes());
    tiff.extend(entry(0x0001, 2, 2, u32::from_le_bytes(*b"N\0\0\0")));
    tiff.extend(entry(0x0002, 5, 3, 68));
    tiff.extend_from_slice(&0u32.to_le_bytes());
    for (numerator, denominator) in [(52u32, 1u32), (22, 1), (0, 1)] {
        tiff.extend_from_slice(&numerator.to_le_bytes());
        tiff.extend_from_slice(&denominator.to_le_bytes());
    }
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend(tiff);
    exif
}
