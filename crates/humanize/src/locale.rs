//! The forms each supported language writes numbers and dates in, as CLDR
//! (and so the webview's `Intl`) gives them for a short weekday, day, short
//! month, 2-digit hour and minute; and resolving a locale name to one.

/// What one language writes differently.
#[derive(Debug)]
pub(crate) struct LocaleData {
    /// The tag these forms belong to (`en-GB`).
    pub tag: &'static str,
    /// Between groups of three digits.
    pub group: &'static str,
    /// Before the fraction.
    pub decimal: &'static str,
    /// The fewest digits before the first group mark (2 in Spanish: `1234`
    /// stays as it is, `12.345` is grouped).
    pub min_grouping: usize,
    /// Monday first, as written inside a date.
    pub weekdays: [&'static str; 7],
    /// January first, as written inside a date.
    pub months: [&'static str; 12],
    /// The date and time, with `{w}` weekday, `{d}` day, `{m}` month, `{t}` time.
    pub pattern: &'static str,
    /// The same with `{y}`, for a date outside the current year.
    pub pattern_with_year: &'static str,
    /// A 12-hour clock with AM/PM (after U+202F, as CLDR writes it).
    pub twelve_hour: bool,
}

const EN_WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

pub(crate) static EN_GB: LocaleData = LocaleData {
    tag: "en-GB",
    group: ",",
    decimal: ".",
    min_grouping: 1,
    weekdays: EN_WEEKDAYS,
    months: [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec",
    ],
    pattern: "{w} {d} {m}, {t}",
    // The same shape with the year added: "Thu 4 Mar 2027, 11:03".
    pattern_with_year: "{w} {d} {m} {y}, {t}",
    twelve_hour: false,
};

static EN_US: LocaleData = LocaleData {
    tag: "en-US",
    group: ",",
    decimal: ".",
    min_grouping: 1,
    weekdays: EN_WEEKDAYS,
    months: [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ],
    pattern: "{w}, {m} {d}, {t}",
    pattern_with_year: "{w}, {m} {d}, {y}, {t}",
    twelve_hour: true,
};

static DE: LocaleData = LocaleData {
    tag: "de",
    group: ".",
    decimal: ",",
    min_grouping: 1,
    weekdays: ["Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa.", "So."],
    months: [
        "Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.",
        "Dez.",
    ],
    pattern: "{w}, {d}. {m}, {t}",
    pattern_with_year: "{w}, {d}. {m} {y}, {t}",
    twelve_hour: false,
};

static FR: LocaleData = LocaleData {
    tag: "fr",
    group: "\u{202f}",
    decimal: ",",
    min_grouping: 1,
    weekdays: ["lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim."],
    months: [
        "janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.",
        "déc.",
    ],
    pattern: "{w} {d} {m}, {t}",
    pattern_with_year: "{w} {d} {m} {y}, {t}",
    twelve_hour: false,
};

static ES: LocaleData = LocaleData {
    tag: "es",
    group: ".",
    decimal: ",",
    min_grouping: 2,
    weekdays: ["lun", "mar", "mié", "jue", "vie", "sáb", "dom"],
    months: [
        "ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic",
    ],
    pattern: "{w}, {d} {m}, {t}",
    pattern_with_year: "{w}, {d} {m} {y}, {t}",
    twelve_hour: false,
};

static NL: LocaleData = LocaleData {
    tag: "nl",
    group: ".",
    decimal: ",",
    min_grouping: 1,
    weekdays: ["ma", "di", "wo", "do", "vr", "za", "zo"],
    months: [
        "jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec",
    ],
    pattern: "{w} {d} {m}, {t}",
    pattern_with_year: "{w} {d} {m} {y}, {t}",
    twelve_hour: false,
};

/// A locale name as the environment spells it (`en_GB.UTF-8`, `de_DE@euro`,
/// `fr-CA`, `C`) → its BCP 47 tag and the forms written for it. The C and
/// POSIX locales (no language chosen) are British English: English words,
/// a 24-hour clock, the day before the month. A name that is not a plain
/// language tag is treated as no choice.
pub(crate) fn resolve(name: &str) -> (String, &'static LocaleData) {
    let base = name
        .split(['.', '@'])
        .next()
        .unwrap_or_default()
        .trim()
        .replace('_', "-");
    let plain = !base.is_empty()
        && base.len() <= 35
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && base.split('-').all(|part| !part.is_empty());
    if !plain || base.eq_ignore_ascii_case("C") || base.eq_ignore_ascii_case("POSIX") {
        return (EN_GB.tag.to_owned(), &EN_GB);
    }
    let mut parts = base.split('-');
    let language = parts.next().unwrap_or_default().to_ascii_lowercase();
    // Region subtags are upper case, scripts title case, as BCP 47 prefers.
    let rest: Vec<String> = parts
        .map(|part| match part.len() {
            2 => part.to_ascii_uppercase(),
            4 => {
                let lower = part.to_ascii_lowercase();
                lower[..1].to_ascii_uppercase() + &lower[1..]
            }
            _ => part.to_ascii_lowercase(),
        })
        .collect();
    let tag = std::iter::once(language.clone())
        .chain(rest.iter().cloned())
        .collect::<Vec<_>>()
        .join("-");
    let data = match language.as_str() {
        "en" if rest.first().map(String::as_str) == Some("US") => &EN_US,
        "en" => &EN_GB,
        "de" => &DE,
        "fr" => &FR,
        "es" => &ES,
        "nl" => &NL,
        _ => &EN_GB,
    };
    (tag, data)
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn environment_names_become_tags() {
        assert_eq!(resolve("en_GB.UTF-8").0, "en-GB");
        assert_eq!(resolve("de_DE@euro").0, "de-DE");
        assert_eq!(resolve("zh_hant_tw").0, "zh-Hant-TW");
        assert_eq!(resolve("C.UTF-8").0, "en-GB");
        assert_eq!(resolve("POSIX").0, "en-GB");
        assert_eq!(resolve("").0, "en-GB");
        assert_eq!(resolve("en US; rm -rf").0, "en-GB", "not a tag: no choice");
    }

    #[test]
    fn each_language_has_its_forms_and_others_fall_back_to_british_english() {
        assert_eq!(resolve("en_US.UTF-8").1.tag, "en-US");
        assert_eq!(resolve("en_AU.UTF-8").1.tag, "en-GB");
        assert_eq!(resolve("de_AT.UTF-8").1.tag, "de");
        assert_eq!(resolve("fr_CA").1.tag, "fr");
        assert_eq!(resolve("ja_JP.UTF-8").1.tag, "en-GB");
        assert_eq!(
            resolve("ja_JP.UTF-8").0,
            "ja-JP",
            "the interface still gets Japanese"
        );
    }
}
