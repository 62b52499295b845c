//! Glob matching for rules: `*` matches any run of characters (including `/`), `?` exactly one
//! character, everything else itself. Case-sensitive, whole-string. Linear-space, no
//! recursion: the classic two-pointer match with one backtrack point, O(len(text) * len(pattern))
//! at worst.

/// A compiled glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: Vec<char>,
    source: String,
}

impl Glob {
    /// Compiles a pattern. Every string is a valid pattern.
    pub fn new(pattern: &str) -> Glob {
        Glob { pattern: pattern.chars().collect(), source: pattern.to_string() }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// True if the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        let t: Vec<char> = text.chars().collect();
        let p = &self.pattern;
        let (mut ti, mut pi) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while ti < t.len() {
            if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
                ti += 1;
                pi += 1;
            } else if pi < p.len() && p[pi] == '*' {
                star = Some((pi, ti));
                pi += 1;
            } else if let Some((sp, st)) = star {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            } else {
                return false;
            }
        }
        p[pi..].iter().all(|&c| c == '*')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_examples() {
        let g = Glob::new("https://*.example.com/*.js");
        assert!(g.matches("https://cdn.example.com/a/b.js"));
        assert!(!g.matches("https://cdn.example.com/a/b.jsx"));
        assert!(!g.matches("http://cdn.example.com/a.js"));
        assert!(Glob::new("*").matches(""));
        assert!(Glob::new("a?c").matches("abc"));
        assert!(!Glob::new("a?c").matches("ac"));
        assert!(Glob::new("*a*b*").matches("xxaxxbxx"));
        assert!(!Glob::new("*a*b").matches("xxbxxa"));
        assert!(Glob::new("é*").matches("été"));
    }
}
