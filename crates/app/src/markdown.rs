//! Question descriptions are markdown written by whoever placed the request file: untrusted.
//! They are rendered to HTML here, in Rust, and sanitised before the window ever sees them,
//! so the UI can insert the result without parsing anything itself.

use std::collections::HashSet;
use std::sync::OnceLock;

use pulldown_cmark::{html, Options, Parser};

/// Markdown to sanitised HTML: no scripts, no event handlers, no styles, no images (an
/// image would be a request to a remote server, telling it the operator is reading), and
/// links only to `http` and `https`, the only ones `open_link` opens.
pub fn render_markdown(markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let mut unsafe_html = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut unsafe_html, Parser::new_ext(markdown, options));
    sanitiser().clean(&unsafe_html).to_string()
}

fn sanitiser() -> &'static ammonia::Builder<'static> {
    static BUILDER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    BUILDER.get_or_init(|| {
        let mut builder = ammonia::Builder::default();
        builder
            .rm_tags(["img"])
            .url_schemes(HashSet::from(["http", "https"]))
            .url_relative(ammonia::UrlRelative::Deny)
            .link_rel(Some("noopener noreferrer nofollow"));
        builder
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_html() {
        let html = render_markdown("**Deploy** to `prod`?\n\n- one\n- two");
        assert!(html.contains("<strong>Deploy</strong>"), "{html}");
        assert!(html.contains("<code>prod</code>"), "{html}");
        assert!(html.contains("<li>two</li>"), "{html}");
    }

    #[test]
    fn scripts_handlers_and_javascript_links_are_removed() {
        let html = render_markdown(
            "<script>alert(1)</script>\n\n<img src=x onerror=\"alert(2)\">\n\n\
             [click](javascript:alert(3)) <a href=\"javascript:alert(4)\" onclick=\"alert(5)\">x</a>\n\n\
             <iframe src=\"https://evil.example\"></iframe><style>body{}</style>",
        );
        for bad in [
            "<script",
            "onerror",
            "javascript:",
            "onclick",
            "<img",
            "<iframe",
            "<style",
            "alert(1)",
        ] {
            assert!(!html.contains(bad), "{bad} survived in {html}");
        }
    }

    #[test]
    fn remote_images_are_dropped_and_web_links_kept() {
        let html = render_markdown(
            "![pixel](https://tracker.example/p.gif) [docs](https://example.com/x)",
        );
        assert!(!html.contains("tracker.example"), "{html}");
        assert!(html.contains("href=\"https://example.com/x\""), "{html}");
        assert!(
            html.contains("rel=\"noopener noreferrer nofollow\""),
            "{html}"
        );
    }
}
