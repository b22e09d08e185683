//! The pairing link as a QR code, so a phone's camera opens it: SVG markup made here from
//! our own link (no request content), for the desktop's Settings to show.

use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

/// The link as an SVG QR code; `None` if it is too long for one (it never is).
pub fn svg(link: &str) -> Option<String> {
    let code = QrCode::with_error_correction_level(link.as_bytes(), EcLevel::M).ok()?;
    Some(
        code.render::<svg::Color<'_>>()
            .min_dimensions(200, 200)
            .quiet_zone(true)
            .build(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pairing_link_becomes_an_svg() {
        let svg = super::svg("https://192.0.2.7:8443/#pair=abc&fp=AB:CD").unwrap();
        assert!(svg.starts_with("<?xml") || svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("<svg"));
    }
}
