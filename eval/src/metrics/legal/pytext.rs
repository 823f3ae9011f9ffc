//! The few rules of Python that differ from Rust's and that upstream's legal metrics rely on,
//! beside `str.strip` (`mb_upstream::python::strip`): `re`'s `\s` (Python's white space, which
//! unlike Rust's White_Space includes U+001C to U+001F), and `list.remove` inside a `for` loop
//! over the list.

/// The class Python's `re` means by `\s` in a `str` pattern, to put in a Rust pattern.
pub(crate) const RE_SPACE: &str = r"[\s\x1c-\x1f]";

/// What `for item in items: if drop(item): items.remove(item)` leaves: the loop's index moves
/// on after each removal (skipping the element that slid into place), and `remove` takes the
/// first element equal to the one visited.
pub(crate) fn remove_while_iterating(items: &mut Vec<String>, drop: impl Fn(&str) -> bool) {
    let mut at = 0;
    while at < items.len() {
        if drop(&items[at]) {
            if let Some(first) = items.iter().position(|item| *item == items[at]) {
                items.remove(first);
            }
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_during_iteration_skips_the_next_item() {
        // Python: l = ['a', 'b', 'c', 'd']; for x in l: l.remove(x)  ->  ['b', 'd']
        let mut items: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        remove_while_iterating(&mut items, |_| true);
        assert_eq!(items, ["b", "d"]);
        let mut items: Vec<String> = ["x", "x元", "y", "z"].map(String::from).to_vec();
        remove_while_iterating(&mut items, |s| !s.contains('元'));
        assert_eq!(items, ["x元", "z"]);
    }
}
