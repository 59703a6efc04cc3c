//! Statement text as the engine's tokens, each with the bytes it covers in the text as written.
//!
//! Splitting a script and rewriting a clause slice the original text instead of printing
//! tokens back: a printed token loses how it was written (`'it''s'` prints as `'it's'`, which
//! no longer parses), a slice keeps every escape, quote and comment.

use std::ops::Range;

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};

/// One token and its bytes in the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpannedToken {
    /// The token, as the engine's parser (DataFusion's generic dialect) reads it.
    pub token: Token,
    /// Where it is written in the text.
    pub range: Range<usize>,
}

impl SpannedToken {
    /// Whether this is the unquoted word `word` (any case).
    pub fn is_word(&self, word: &str) -> bool {
        matches!(&self.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
    }

    /// Whether this is whitespace or a comment.
    pub fn is_blank(&self) -> bool {
        matches!(self.token, Token::Whitespace(_))
    }
}

/// The tokens of `text` in order, with their byte ranges; `None` when it does not tokenize
/// (an unterminated string, ...), which the parser reports later.
pub(crate) fn spanned_tokens(text: &str) -> Option<Vec<SpannedToken>> {
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize_with_location()
        .ok()?;
    let mut cursor = Cursor {
        text,
        byte: 0,
        at: Location { line: 1, column: 1 },
    };
    Some(
        tokens
            .into_iter()
            .map(|t| {
                let start = cursor.advance_to(t.span.start);
                let end = cursor.advance_to(t.span.end);
                SpannedToken {
                    token: t.token,
                    range: start..end,
                }
            })
            .collect(),
    )
}

/// Walks the text once, turning the tokenizer's line and column (counted in characters, as it
/// counts them) into byte offsets.
struct Cursor<'a> {
    text: &'a str,
    byte: usize,
    at: Location,
}

impl Cursor<'_> {
    fn advance_to(&mut self, to: Location) -> usize {
        while (self.at.line, self.at.column) < (to.line, to.column) {
            let Some(c) = self.text[self.byte..].chars().next() else {
                break;
            };
            self.byte += c.len_utf8();
            if c == '\n' {
                self.at.line += 1;
                self.at.column = 1;
            } else {
                self.at.column += 1;
            }
        }
        self.byte
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_slice_the_text_as_written() {
        let text = "SELECT 'é''s' -- note\n, \"a\"\"b\";";
        let tokens = spanned_tokens(text).unwrap();
        let slices: Vec<&str> = tokens
            .iter()
            .filter(|t| !t.is_blank())
            .map(|t| &text[t.range.clone()])
            .collect();
        assert_eq!(slices, ["SELECT", "'é''s'", ",", "\"a\"\"b\"", ";"]);
        let joined: String = tokens.iter().map(|t| &text[t.range.clone()]).collect();
        assert_eq!(joined, text);
        assert!(spanned_tokens("SELECT 'open").is_none());
    }
}
