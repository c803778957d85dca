//! serde's `rename_all` rules, so that stored field names here are the ones serde writes.

/// One of serde's `rename_all` rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

/// The names serde accepts, in serde's order.
pub const RULE_NAMES: &[&str] = &[
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

impl RenameRule {
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// What serde does to a struct field's name (fields are snake_case in Rust).
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_rules_match_serde() {
        let cases = [
            ("instrument_type", "camelCase", "instrumentType"),
            ("instrument_type", "PascalCase", "InstrumentType"),
            ("instrument_type", "SCREAMING_SNAKE_CASE", "INSTRUMENT_TYPE"),
            ("instrument_type", "kebab-case", "instrument-type"),
            ("instrument_type", "SCREAMING-KEBAB-CASE", "INSTRUMENT-TYPE"),
            ("instrument_type", "lowercase", "instrument_type"),
            ("instrument_type", "UPPERCASE", "INSTRUMENT_TYPE"),
            ("price", "camelCase", "price"),
        ];
        for (field, rule, stored) in cases {
            let rule = RenameRule::from_name(rule).unwrap();
            assert_eq!(rule.apply_to_field(field), stored, "{rule:?}");
        }
        assert_eq!(RULE_NAMES.len(), 8);
        assert!(
            RULE_NAMES
                .iter()
                .all(|name| RenameRule::from_name(name).is_some())
        );
    }
}
