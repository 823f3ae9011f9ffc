//! The text of a panic, for code that turns one into an error or a one-line report.

use std::any::Any;

/// The message a panic carried (`panic!("...")` gives a `&str` or a `String`), if it is text.
pub fn panic_text(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_kinds_of_message() {
        let formatted = std::panic::catch_unwind(|| panic!("row {}", 3)).unwrap_err();
        assert_eq!(panic_text(formatted.as_ref()), Some("row 3"));
        let literal = std::panic::catch_unwind(|| panic!("plain")).unwrap_err();
        assert_eq!(panic_text(literal.as_ref()), Some("plain"));
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7)).unwrap_err();
        assert_eq!(panic_text(other.as_ref()), None);
    }
}
