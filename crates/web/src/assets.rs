//! The UI's built files (ui/dist, the same build the desktop window loads), with the
//! headers that keep a request's content from doing anything in the page: the window's CSP
//! (no inline script, nothing remote; here `connect-src 'self'` for the API and its event
//! stream), no framing, no sniffing, no referrer.
//!
//! Release builds carry the files inside the binary; debug builds read them from ui/dist
//! (rust-embed's default), so a rebuilt UI needs no Rust rebuild while developing.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "../../ui/dist"]
struct Ui;

/// The page's Content-Security-Policy: the desktop window's (src-tauri/tauri.conf.json), with
/// the API on the page's own origin in place of Tauri's IPC, and no framing at all.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; \
    base-uri 'none'; form-action 'none'; frame-src 'none'; frame-ancestors 'none'";

/// Headers every response carries, the API's too.
pub fn security_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
}

/// A file of the UI by its path; any other path is the app itself (index.html), which
/// routes on its own.
pub fn file(path: &str) -> Response {
    let path = path.trim_start_matches('/');
    let (name, file) = match Ui::get(path) {
        Some(file) if !path.is_empty() => (path, file),
        _ => match Ui::get("index.html") {
            Some(file) => ("index.html", file),
            None => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the UI was not built: run scripts/ui, then start the server again",
                )
                    .into_response()
            }
        },
    };
    let mut response = file.data.into_owned().into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(name)),
    );
    // Built assets carry a content hash in their names; the page itself must be fresh.
    let cache = if name.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-store"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_unknown_paths_are_the_app_and_never_cached() {
        for path in ["/", "/index.html", "/some/route"] {
            let response = file(path);
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            assert_eq!(
                response.headers()[header::CONTENT_TYPE],
                "text/html; charset=utf-8"
            );
            assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
        }
    }

    #[test]
    fn the_csp_allows_no_inline_script_and_nothing_remote() {
        assert!(CSP.contains("script-src 'self';"));
        assert!(!CSP.contains("unsafe"));
        assert!(CSP.contains("frame-ancestors 'none'"));
    }
}
