use humanize::{Humanizer, TimeZone};

fn h(locale: &str) -> Humanizer {
    Humanizer::new(locale, TimeZone::UTC)
}

#[test]
fn amounts_are_grouped_in_thousands_and_keep_every_decimal() {
    let en = h("en_GB.UTF-8");
    assert_eq!(en.amount("570000"), "570,000");
    assert_eq!(en.amount("1140000.50"), "1,140,000.50");
    assert_eq!(en.amount("999"), "999");
    assert_eq!(en.amount("1000"), "1,000");
    // Exact: more digits than a float holds, every one kept.
    assert_eq!(
        en.amount("12345678901234567890.123456789"),
        "12,345,678,901,234,567,890.123456789"
    );
    assert_eq!(en.amount("0.10"), "0.10", "trailing zeros are the sender's");
}

#[test]
fn signs_are_a_true_minus_and_zero_has_none() {
    let en = h("en_GB");
    assert_eq!(en.amount("-20000"), "\u{2212}20,000");
    assert_eq!(en.amount("+20000"), "20,000");
    assert_eq!(en.amount("-0.00"), "0.00");
}

#[test]
fn text_that_is_not_a_decimal_is_left_as_it_is() {
    let en = h("en_GB");
    for text in ["1e6", "12,000", "abc", "", "1.", ".5", "--1", "NaN"] {
        assert_eq!(en.amount(text), text);
    }
}

#[test]
fn each_locale_has_its_own_marks() {
    assert_eq!(h("de_DE.UTF-8").amount("1140000.50"), "1.140.000,50");
    assert_eq!(
        h("fr_FR.UTF-8").amount("1140000.50"),
        "1\u{202f}140\u{202f}000,50"
    );
    assert_eq!(h("nl_NL").amount("1234.5"), "1.234,5");
    // Spanish groups from five digits on (CLDR's minimum grouping of 2).
    assert_eq!(h("es_ES").amount("1234"), "1234");
    assert_eq!(h("es_ES").amount("12345.6"), "12.345,6");
    assert_eq!(h("en_US").amount("1234"), "1,234");
    assert_eq!(h("ja_JP").amount("1234"), "1,234", "no forms here: English");
}

#[test]
fn money_carries_its_currency_code_after_the_amount() {
    assert_eq!(h("C").money("570000", "USD"), "570,000 USD");
    assert_eq!(h("de_DE").money("72000", "EUR"), "72.000 EUR");
    assert_eq!(h("C").money("5", ""), "5");
}

#[test]
fn counts_are_grouped_too() {
    assert_eq!(h("C").count(1234), "1,234");
    assert_eq!(h("C").count(7), "7");
}

#[test]
fn the_locale_tag_is_what_the_interface_is_given() {
    assert_eq!(h("en_GB.UTF-8").locale_tag(), "en-GB");
    assert_eq!(h("C.UTF-8").locale_tag(), "en-GB");
    assert_eq!(h("de_CH.UTF-8").locale_tag(), "de-CH");
}
