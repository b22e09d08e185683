//! Bubble bodies as plain text.
//!
//! Daemons that advertise `body-markup` (dunst with markup on, GNOME Shell, KDE, most others)
//! read the body as the specification's small XML-based subset of HTML (`<b>`, `<i>`, `<u>`,
//! `<a href>`, `<img>`). Everything a bubble says comes from a request (its title, source,
//! question and labels), written by whoever placed the file, so it is never sent as markup:
//! for those daemons `&`, `<` and `>` are escaped as the entities every XML reader knows, and
//! the daemon shows exactly the characters that were asked; a daemon without `body-markup`
//! gets the body as it is (the specification: markup would show through there as text).
//! Quotes need no escaping in XML text outside a tag, and every tag starts with `<`.
//!
//! The text reaching here has been through the one text policy
//! (`inbox_protocol::text`, in the engine's `compose`): no control characters other than
//! newlines, which XML would refuse, and no invisible or bidirectional characters. The
//! summary line is plain text by the specification and is never escaped (a daemon that
//! obeyed tags there would break the specification; dunst escapes it itself). The body is
//! escaped for the very daemon that shows it: bubbles are addressed to the daemon whose
//! capabilities were asked, by its unique bus name (see `bus`).

/// `text` as markup that shows `text` itself.
pub fn escape_body(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_entities_are_shown_not_obeyed() {
        assert_eq!(
            escape_body("<b>ship</b> & <a href=\"x\">go</a>"),
            "&lt;b&gt;ship&lt;/b&gt; &amp; &lt;a href=\"x\"&gt;go&lt;/a&gt;"
        );
        // Text that already looks escaped is still text.
        assert_eq!(escape_body("&amp; &#60;"), "&amp;amp; &amp;#60;");
    }

    #[test]
    fn a_link_from_a_source_field_is_text() {
        assert_eq!(
            escape_body("planu <i>ops</i> / <a href=\"https://evil.example\">run</a>"),
            "planu &lt;i&gt;ops&lt;/i&gt; / &lt;a href=\"https://evil.example\"&gt;run&lt;/a&gt;"
        );
        assert_eq!(escape_body("<img src=x/>&"), "&lt;img src=x/&gt;&amp;");
    }

    #[test]
    fn plain_text_is_unchanged() {
        let text = "planu / run-7f3a · 2 questions\n• Deploy «prod»";
        assert_eq!(escape_body(text), text);
    }
}
