//! Java regular expressions (`java.util.regex`, which HBase's `regexstring` comparator
//! compiles with DOTALL) translated into the `regex` crate's syntax, and compiled.
//!
//! What is translated: `\Q…\E` quoting, possessive quantifiers (treated as greedy),
//! atomic groups (treated as plain groups), embedded flags (`d`, `u` dropped; `U` turns
//! on Unicode classes), Java's ASCII-only `\d \w \s` and POSIX `\p{Alpha}`-style classes,
//! `\p{javaLowerCase}`-style and `\p{IsLatin}`-style names, `\h \v \R \e \cX`, octal
//! `\0nn`, `\uXXXX` (with surrogate pairs), `\Z`, Java's `$` (also before a final line
//! terminator), escaped punctuation, and the `--`/`~~` sequences that mean set
//! operations to the `regex` crate. What cannot be expressed (look-around, back
//! references, `\G`…) is left for the `regex` crate to reject, and becomes a
//! [`FilterError::InvalidRegex`] naming the pattern.
//!
//! Must not: match cells (the comparator does).

use regex::{Regex, RegexBuilder};

use super::error::FilterError;

/// The largest compiled program accepted for one pattern.
const COMPILED_SIZE_LIMIT: usize = 1 << 20;

/// Java's `$` without MULTILINE: end of input, or just before a final line terminator.
const JAVA_DOLLAR: &str = r"(?:(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?$)";
/// Java's `\Z`: like `$` above, whatever the flags.
const JAVA_END: &str = r"(?:(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?\z)";
/// Java's `\R`: any line break.
const JAVA_LINEBREAK: &str = r"(?:\r\n|[\n\x0B\f\r\x{85}\x{2028}\x{2029}])";
/// Bodies of Java's character-class escapes, as class contents.
const ASCII_DIGIT: &str = "0-9";
const ASCII_WORD: &str = "0-9A-Za-z_";
const ASCII_SPACE: &str = r"\t\n\x0B\f\r\x20";
const HORIZONTAL_SPACE: &str =
    r"\x20\t\xA0\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}";
const VERTICAL_SPACE: &str = r"\n\x0B\f\r\x{85}\x{2028}\x{2029}";

/// Compiles a Java pattern with DOTALL, for find-anywhere matching.
pub(crate) fn compile(java: &str) -> Result<Regex, FilterError> {
    let translated = translate(java);
    RegexBuilder::new(&translated)
        .dot_matches_new_line(true)
        .size_limit(COMPILED_SIZE_LIMIT)
        .build()
        .map_err(|error| FilterError::InvalidRegex {
            pattern: java.to_owned(),
            reason: reason_of(&error),
        })
}

/// The one-line reason inside a `regex` error (its message also quotes the pattern).
fn reason_of(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map(str::to_owned)
        .unwrap_or_else(|| text.lines().last().unwrap_or_default().trim().to_owned())
}

/// Rewrites a Java pattern in the `regex` crate's syntax.
pub(crate) fn translate(java: &str) -> String {
    let mut translator = Translator {
        chars: java.chars().collect(),
        pos: 0,
        out: String::with_capacity(java.len() + 16),
        class_depth: 0,
        unicode_classes: false,
        after_quantifier: false,
    };
    translator.run();
    translator.out
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// How many character classes are open (Java and `regex` both nest them).
    class_depth: usize,
    /// Set by Java's `(?U)`: `\d \w \s` and POSIX names become Unicode-aware.
    unicode_classes: bool,
    /// The last thing emitted outside a class was a quantifier.
    after_quantifier: bool,
}

impl Translator {
    fn run(&mut self) {
        while let Some(c) = self.next() {
            if self.class_depth > 0 {
                self.in_class(c);
            } else {
                self.outside_class(c);
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn outside_class(&mut self, c: char) {
        let follows_quantifier = std::mem::replace(&mut self.after_quantifier, false);
        match c {
            '\\' => self.escape(false),
            '[' => self.open_class(),
            '(' => self.group(),
            '+' if follows_quantifier => {} // possessive: matched greedily
            '?' if follows_quantifier => self.out.push('?'), // reluctant
            '*' | '+' | '?' => {
                self.out.push(c);
                self.after_quantifier = true;
            }
            '{' => match self.repetition() {
                Some(counts) => {
                    self.out.push('{');
                    self.out.push_str(&counts);
                    self.after_quantifier = true;
                }
                None => self.out.push('{'),
            },
            '$' => self.out.push_str(JAVA_DOLLAR),
            _ => self.out.push(c),
        }
    }

    fn in_class(&mut self, c: char) {
        match c {
            '\\' => self.escape(true),
            '[' => self.open_class(),
            ']' => {
                self.class_depth = self.class_depth.saturating_sub(1);
                self.out.push(']');
            }
            // The regex crate reads these pairs as set difference / symmetric difference.
            '-' | '~' if self.peek() == Some(c) => {
                self.pos += 1;
                self.out.push(c);
                self.out.push('\\');
                self.out.push(c);
            }
            _ => self.out.push(c),
        }
    }

    fn open_class(&mut self) {
        self.class_depth += 1;
        self.out.push('[');
        if self.peek() == Some('^') {
            self.pos += 1;
            self.out.push('^');
        }
    }

    /// After `{`: the rest of a `{n}`, `{n,}` or `{n,m}` repetition, consumed.
    fn repetition(&mut self) -> Option<String> {
        let mut text = String::new();
        let mut ahead = 0;
        let mut digits = 0;
        let mut commas = 0;
        loop {
            let c = self.peek_at(ahead)?;
            ahead += 1;
            match c {
                '0'..='9' => digits += 1,
                ',' if digits > 0 && commas == 0 => commas += 1,
                '}' if digits > 0 => {
                    text.push('}');
                    self.pos += ahead;
                    return Some(text);
                }
                _ => return None,
            }
            text.push(c);
        }
    }

    /// After `(`: atomic groups and embedded flags are rewritten, the rest kept.
    fn group(&mut self) {
        if self.peek() != Some('?') {
            self.out.push('(');
            return;
        }
        if self.peek_at(1) == Some('>') {
            self.pos += 2;
            self.out.push_str("(?:");
            return;
        }
        if let Some((flags, terminator, consumed)) = self.flag_group() {
            self.pos += consumed;
            self.emit_flags(&flags, terminator);
            return;
        }
        self.pos += 1;
        self.out.push_str("(?");
    }

    /// `?flags)` or `?flags:` ahead: the flags, the terminator and the length.
    fn flag_group(&self) -> Option<(Vec<char>, char, usize)> {
        let mut flags = Vec::new();
        let mut ahead = 1;
        loop {
            let c = self.peek_at(ahead)?;
            ahead += 1;
            match c {
                ')' | ':' => return Some((flags, c, ahead)),
                'i' | 'd' | 'm' | 's' | 'u' | 'x' | 'U' | '-' => flags.push(c),
                _ => return None,
            }
        }
    }

    fn emit_flags(&mut self, flags: &[char], terminator: char) {
        let mut on = String::new();
        let mut off = String::new();
        let mut negated = false;
        for &flag in flags {
            match flag {
                '-' => negated = true,
                'U' => self.unicode_classes = !negated,
                'i' | 'm' | 's' | 'x' if negated => off.push(flag),
                'i' | 'm' | 's' | 'x' => on.push(flag),
                _ => {} // UNIX_LINES and UNICODE_CASE have no counterpart to set
            }
        }
        if on.is_empty() && off.is_empty() {
            if terminator == ':' {
                self.out.push_str("(?:");
            }
            return;
        }
        self.out.push_str("(?");
        self.out.push_str(&on);
        if !off.is_empty() {
            self.out.push('-');
            self.out.push_str(&off);
        }
        self.out.push(terminator);
    }

    /// After `\`.
    fn escape(&mut self, in_class: bool) {
        let Some(c) = self.next() else {
            self.out.push('\\');
            return;
        };
        match c {
            'Q' => self.quoted(),
            'E' => {} // a stray end of quoting
            'd' | 'D' | 'w' | 'W' | 's' | 'S' if !self.unicode_classes => {
                let body = match c.to_ascii_lowercase() {
                    'd' => ASCII_DIGIT,
                    'w' => ASCII_WORD,
                    _ => ASCII_SPACE,
                };
                self.push_class(body, c.is_ascii_uppercase());
            }
            'h' | 'H' => self.push_class(HORIZONTAL_SPACE, c == 'H'),
            'v' | 'V' => self.push_class(VERTICAL_SPACE, c == 'V'),
            'R' if !in_class => self.out.push_str(JAVA_LINEBREAK),
            'Z' if !in_class => self.out.push_str(JAVA_END),
            'e' => self.push_code_point(0x1B),
            'a' => self.push_code_point(0x07),
            'c' => match self.next() {
                Some(control) => self.push_code_point(u32::from(control) ^ 0x40),
                None => self.out.push_str(r"\c"),
            },
            '0' => self.octal(),
            'u' => self.unicode_escape(),
            'x' => self.hex_escape(),
            'p' | 'P' => self.property(c == 'P'),
            _ if c.is_ascii_alphanumeric() => {
                // Shared escapes (\t \n \b \A \z ...) or ones the regex crate rejects.
                self.out.push('\\');
                self.out.push(c);
            }
            _ if c.is_ascii() => self.push_code_point(u32::from(c)),
            _ => self
                .out
                .push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }

    fn push_class(&mut self, body: &str, negated: bool) {
        self.out.push('[');
        if negated {
            self.out.push('^');
        }
        self.out.push_str(body);
        self.out.push(']');
    }

    fn push_code_point(&mut self, code: u32) {
        self.out.push_str(&format!("\\x{{{code:X}}}"));
    }

    /// After `\Q`: everything up to `\E` (or the end) is literal.
    fn quoted(&mut self) {
        let mut literal = String::new();
        while let Some(c) = self.next() {
            if c == '\\' && self.peek() == Some('E') {
                self.pos += 1;
                break;
            }
            literal.push(c);
        }
        self.out.push_str(&regex::escape(&literal));
    }

    /// After `\0`: one to three octal digits (three only when the first is 0-3).
    fn octal(&mut self) {
        let mut value = 0u32;
        let mut digits = 0;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(8)) {
            // After two digits, `value` is the first times 8 plus the second.
            let allowed = digits < 2 || (digits == 2 && value / 8 <= 3);
            if !allowed {
                break;
            }
            value = value * 8 + digit;
            digits += 1;
            self.pos += 1;
        }
        if digits == 0 {
            self.out.push_str(r"\0");
        } else {
            self.push_code_point(value);
        }
    }

    /// Four hex digits ahead, if present.
    fn four_hex_at(&self, ahead: usize) -> Option<u32> {
        let mut value = 0;
        for offset in 0..4 {
            value = value * 16 + self.peek_at(ahead + offset)?.to_digit(16)?;
        }
        Some(value)
    }

    /// After `\u`: a UTF-16 unit, combined with a following low surrogate if needed.
    fn unicode_escape(&mut self) {
        let Some(unit) = self.four_hex_at(0) else {
            self.out.push_str(r"\u");
            return;
        };
        self.pos += 4;
        if (0xD800..0xDC00).contains(&unit)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
        {
            if let Some(low) = self
                .four_hex_at(2)
                .filter(|low| (0xDC00..0xE000).contains(low))
            {
                self.pos += 6;
                self.push_code_point(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                return;
            }
        }
        if (0xD800..0xE000).contains(&unit) {
            // A lone surrogate stays as written, for the regex crate to reject.
            self.out.push_str(&format!("\\u{unit:04X}"));
        } else {
            self.push_code_point(unit);
        }
    }

    /// After `\x`: `hh` or `{h...}`, copied as written (same syntax in both engines).
    fn hex_escape(&mut self) {
        self.out.push_str(r"\x");
        if self.peek() == Some('{') {
            while let Some(c) = self.next() {
                self.out.push(c);
                if c == '}' {
                    break;
                }
            }
        } else {
            for _ in 0..2 {
                match self.peek() {
                    Some(c) if c.is_ascii_hexdigit() => {
                        self.pos += 1;
                        self.out.push(c);
                    }
                    _ => break,
                }
            }
        }
    }

    /// After `\p` or `\P`: a property name, mapped to the regex crate's spelling.
    fn property(&mut self, negated: bool) {
        let name = if self.peek() == Some('{') {
            self.pos += 1;
            let mut name = String::new();
            loop {
                match self.next() {
                    Some('}') => break,
                    Some(c) => name.push(c),
                    None => {
                        // Unclosed: hand it over as written, to be rejected.
                        self.out.push_str(if negated { r"\P{" } else { r"\p{" });
                        self.out.push_str(&name);
                        return;
                    }
                }
            }
            name
        } else {
            match self.next() {
                Some(c) => c.to_string(),
                None => {
                    self.out.push_str(if negated { r"\P" } else { r"\p" });
                    return;
                }
            }
        };
        let body = property_body(&name, self.unicode_classes);
        self.push_class(&body, negated);
    }
}

/// Class contents for a Java property name.
fn property_body(name: &str, unicode_classes: bool) -> String {
    let posix = match name {
        "Lower" => Some(("lower", r"\p{Lowercase}")),
        "Upper" => Some(("upper", r"\p{Uppercase}")),
        "ASCII" => Some(("ascii", r"\x00-\x7F")),
        "Alpha" => Some(("alpha", r"\p{Alphabetic}")),
        "Digit" => Some(("digit", r"\p{Nd}")),
        "Alnum" => Some(("alnum", r"\p{Alphabetic}\p{Nd}")),
        "Punct" => Some(("punct", r"\p{P}")),
        "Graph" => Some(("graph", r"^\p{White_Space}\p{Cc}\p{Cn}\p{Cs}")),
        "Print" => Some(("print", r"^\p{Cc}\p{Cn}\p{Cs}")),
        "Blank" => Some(("blank", r"\p{Zs}\t")),
        "Cntrl" => Some(("cntrl", r"\p{Cc}")),
        "XDigit" => Some(("xdigit", r"\p{Nd}a-fA-F")),
        "Space" => Some(("space", r"\p{White_Space}")),
        _ => None,
    };
    if let Some((ascii, unicode)) = posix {
        return if unicode_classes {
            if let Some(excluded) = unicode.strip_prefix('^') {
                format!("[^{excluded}]")
            } else {
                unicode.to_owned()
            }
        } else {
            format!("[:{ascii}:]")
        };
    }
    let mapped = match name {
        "javaLowerCase" => r"\p{Lowercase}",
        "javaUpperCase" => r"\p{Uppercase}",
        "javaWhitespace" => r"\p{White_Space}",
        "javaMirrored" => r"\p{Bidi_Mirrored}",
        "javaDigit" => r"\p{Nd}",
        "javaLetter" => r"\p{L}",
        "javaLetterOrDigit" => r"\p{L}\p{Nd}",
        "javaAlphabetic" => r"\p{Alphabetic}",
        _ => "",
    };
    if !mapped.is_empty() {
        return mapped.to_owned();
    }
    let plain = name
        .strip_prefix("Is")
        .filter(|rest| !rest.is_empty())
        .unwrap_or(name);
    format!(r"\p{{{plain}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finds(pattern: &str, text: &str) -> bool {
        compile(pattern)
            .unwrap_or_else(|e| panic!("{pattern} did not compile: {e}"))
            .is_match(text)
    }

    #[test]
    fn possessive_and_atomic_constructs_compile() {
        assert!(finds("a++b", "aab"));
        assert!(finds("a*+b", "b"));
        assert!(finds("x{2}+y", "xxy"));
        assert!(finds("(?>ab)c", "zabc"));
        assert!(finds("a+?b", "aab"));
    }

    #[test]
    fn quoting_is_literal() {
        assert!(finds(r"\Qa.b\E", "xa.b"));
        assert!(!finds(r"\Qa.b\E", "axb"));
        assert!(finds(r"\Q(x\E+", "(xx"));
    }

    #[test]
    fn class_escapes_are_ascii_unless_unicode_flag() {
        assert!(!finds(r"^\w+$", "é"));
        assert!(finds(r"(?U)^\w+$", "é"));
        assert!(!finds(r"\d", "٣"));
        assert!(finds(r"[\w-]+", "a-b"));
        assert!(finds(r"^\S+$", "abc"));
        assert!(finds(r"\s", "a\u{b}b"));
    }

    #[test]
    fn dollar_also_matches_before_a_final_newline() {
        assert!(finds(r"^\d{2}$", "12"));
        assert!(finds(r"^\d{2}$", "12\n"));
        assert!(!finds(r"^\d{2}$", "123"));
        assert!(finds(r"b\Z", "ab\r\n"));
        assert!(!finds(r"b\z", "ab\n"));
    }

    #[test]
    fn posix_and_java_properties() {
        assert!(finds(r"^\p{Alpha}+$", "abc"));
        assert!(!finds(r"^\p{Alpha}+$", "ab1"));
        assert!(finds(r"^[\p{Digit}x]+$", "1x2"));
        assert!(finds(r"^\P{Digit}$", "a"));
        assert!(finds(r"^\p{javaLowerCase}$", "ß"));
        assert!(finds(r"^\p{IsLatin}$", "a"));
        assert!(finds(r"^\p{L}$", "ж"));
        assert!(finds(r"^\pL$", "ж"));
    }

    #[test]
    fn character_escapes() {
        assert!(finds(r"\e", "\u{1b}"));
        assert!(finds(r"^\0101$", "A"));
        assert!(finds(r"^\cA$", "\u{1}"));
        assert!(finds(r"^\u0041+$", "AA"));
        assert!(finds(r"^\uD83D\uDE00$", "😀"));
        assert!(finds(r"^\x41\x{42}+$", "ABB"));
        assert!(finds(r"^\<a\>$", "<a>"));
        assert!(finds(r"^a\.b\/c$", "a.b/c"));
        assert!(finds(r"\h", "\u{a0}"));
        assert!(finds(r"a\Rb", "a\r\nb"));
    }

    #[test]
    fn flags_and_class_operators() {
        assert!(finds("(?i)abc", "xABC"));
        assert!(finds("(?d)a", "a"));
        assert!(finds("(?iu-d:x)y", "Xy"));
        assert!(finds("(?-s)a.b", "axb"));
        assert!(!finds("(?-s)a.b", "a\nb"));
        assert!(finds("^[a-z&&[^aeiou]]$", "b"));
        assert!(!finds("^[a-z&&[^aeiou]]$", "a"));
        assert!(finds("^[+--]$", ","));
        assert!(finds("^[a~~]$", "~"));
        assert!(finds("(?<year>\\d{4})", "in 2024"));
    }

    #[test]
    fn unsupported_constructs_are_errors_naming_the_pattern() {
        for pattern in [r"(?<=a)b", r"(a)\1", r"\Ga", "(a", "a{", "[a"] {
            match compile(pattern) {
                Err(FilterError::InvalidRegex {
                    pattern: named,
                    reason,
                }) => {
                    assert_eq!(named, pattern);
                    assert!(!reason.is_empty());
                    assert!(!reason.contains('\n'), "{reason}");
                }
                other => panic!("{pattern}: {other:?}"),
            }
        }
    }
}
