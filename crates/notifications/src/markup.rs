//! Bubble bodies as plain text.
//!
//! Daemons that advertise `body-markup` (dunst, GNOME Shell, KDE, most others) read the body
//! as a small HTML subset. Everything a bubble says comes from a request (its title, its
//! source), written by whoever placed the file, so it is never sent as markup: `&`, `<` and
//! `>` are escaped, and the daemon shows exactly the characters that were asked.

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
    fn plain_text_is_unchanged() {
        let text = "planu / run-7f3a · 2 questions\n• Deploy «prod»";
        assert_eq!(escape_body(text), text);
    }
}
