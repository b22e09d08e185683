//! Links from requests open in the system browser, never inside the app window; and only web
//! links do: a `file:` or custom-scheme URL from an untrusted request must not reach the
//! system's URL handler.

/// Whether `text` is an absolute `http` or `https` URL.
pub fn is_web_link(text: &str) -> bool {
    url::Url::parse(text)
        .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_links_pass() {
        assert!(is_web_link("https://ci.example.com/run/42"));
        assert!(is_web_link("http://localhost:8080/x"));
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "ci.example.com",
            "mailto:a@b",
            "",
            "https://",
        ] {
            assert!(!is_web_link(bad), "{bad}");
        }
    }
}
