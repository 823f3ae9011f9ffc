//! Whoosh's `Query.normalize()`: nested groups of one kind flattened, nulls dropped, duplicate
//! clauses removed, overlapping ranges merged, single-clause groups unwrapped, and wildcards,
//! phrases and ranges that are really terms (or everything, or nothing) rewritten as such.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::WhooshQuery;

impl WhooshQuery {
    /// The query as Whoosh's `normalize()` leaves it.
    pub fn normalize(self) -> WhooshQuery {
        use WhooshQuery::*;
        match self {
            Or(subs, boost) => compound(true, subs, boost),
            And(subs, boost) => compound(false, subs, boost),
            AndNot(a, b) => match (a.normalize(), b.normalize()) {
                (Null, _) => Null,
                (a, Null) => a,
                (a, b) => AndNot(Box::new(a), Box::new(b)),
            },
            AndMaybe(a, b) => match (a.normalize(), b.normalize()) {
                (Null, _) => Null,
                (a, Null) => a,
                (a, b) => AndMaybe(Box::new(a), Box::new(b)),
            },
            Require(a, b) => match (a.normalize(), b.normalize()) {
                (Null, _) | (_, Null) => Null,
                (a, b) => Require(Box::new(a), Box::new(b)),
            },
            Not(q, boost) => match q.normalize() {
                Null => Null,
                q => Not(Box::new(q), boost),
            },
            Wildcard {
                field,
                pattern,
                boost,
            } => {
                if pattern == "*" {
                    Every { field, boost }
                } else if !pattern.contains(['*', '?']) {
                    Term {
                        field,
                        text: pattern,
                        boost,
                    }
                } else if !pattern.contains('?') && pattern.find('*') == Some(pattern.len() - 1) {
                    let mut prefix = pattern;
                    prefix.pop();
                    Prefix {
                        field,
                        prefix,
                        boost,
                    }
                } else {
                    Wildcard {
                        field,
                        pattern,
                        boost,
                    }
                }
            }
            Phrase {
                field, mut words, ..
            } if words.len() < 2 => match words.pop() {
                // A one-word phrase is a term, and loses its boost (as in Whoosh).
                Some(text) => Term {
                    field,
                    text,
                    boost: 1.0,
                },
                None => Null,
            },
            Range {
                field,
                start,
                end,
                start_excl,
                end_excl,
                boost,
            } => {
                let open_start = start.as_deref().is_none_or(str::is_empty);
                let open_end = end.as_deref().is_none_or(|e| e == "\u{ffff}");
                if open_start && open_end {
                    Every { field, boost }
                } else if start == end {
                    match start {
                        Some(text) if !start_excl && !end_excl => Term { field, text, boost },
                        _ => Null,
                    }
                } else {
                    Range {
                        field,
                        start,
                        end,
                        start_excl,
                        end_excl,
                        boost,
                    }
                }
            }
            other => other,
        }
    }

    /// The field the query searches, `None` when it spans several or none (Whoosh's `field()`;
    /// the unfielded `Every` has none).
    fn field(&self) -> Option<&str> {
        use WhooshQuery::*;
        match self {
            Term { field, .. }
            | Wildcard { field, .. }
            | Prefix { field, .. }
            | Phrase { field, .. }
            | Range { field, .. }
            | Every { field, .. } => Some(field.as_str()).filter(|f| !f.is_empty()),
            Or(subs, _) | And(subs, _) => {
                let first = subs.first()?.field();
                subs[1..]
                    .iter()
                    .all(|q| q.field() == first)
                    .then_some(first)?
            }
            AndNot(a, b) | AndMaybe(a, b) | Require(a, b) => {
                let first = a.field();
                (b.field() == first).then_some(first)?
            }
            Not(..) | Null => None,
        }
    }

    /// A hash consistent with `==` (boosts by their bits).
    fn fingerprint(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.hash_into(&mut h);
        h.finish()
    }

    fn hash_into(&self, h: &mut DefaultHasher) {
        use WhooshQuery::*;
        std::mem::discriminant(self).hash(h);
        self.own_boost().to_bits().hash(h);
        match self {
            Term { field, text: t, .. }
            | Wildcard {
                field, pattern: t, ..
            }
            | Prefix {
                field, prefix: t, ..
            } => (field, t).hash(h),
            Phrase {
                field, words, slop, ..
            } => (field, words, slop).hash(h),
            Range {
                field, start, end, ..
            } => (field, start, end).hash(h),
            Every { field, .. } => field.hash(h),
            Or(subs, _) | And(subs, _) => subs.iter().for_each(|q| q.hash_into(h)),
            AndNot(a, b) | AndMaybe(a, b) | Require(a, b) => {
                a.hash_into(h);
                b.hash_into(h);
            }
            Not(q, _) => q.hash_into(h),
            Null => {}
        }
    }

    /// The query's own boost (1 for queries without one).
    fn own_boost(&self) -> f32 {
        use WhooshQuery::*;
        match self {
            Term { boost, .. }
            | Wildcard { boost, .. }
            | Prefix { boost, .. }
            | Phrase { boost, .. }
            | Range { boost, .. }
            | Every { boost, .. }
            | Or(_, boost)
            | And(_, boost)
            | Not(_, boost) => *boost,
            AndNot(..) | AndMaybe(..) | Require(..) | Null => 1.0,
        }
    }

    /// Whoosh's `with_boost`: the boost replaced; binary queries pass it to their first
    /// clause (`ANDMAYBE` to both).
    fn with_boost(self, new: f32) -> WhooshQuery {
        use WhooshQuery::*;
        match self {
            Term { field, text, .. } => Term {
                field,
                text,
                boost: new,
            },
            Wildcard { field, pattern, .. } => Wildcard {
                field,
                pattern,
                boost: new,
            },
            Prefix { field, prefix, .. } => Prefix {
                field,
                prefix,
                boost: new,
            },
            Phrase {
                field, words, slop, ..
            } => Phrase {
                field,
                words,
                slop,
                boost: new,
            },
            Range {
                field,
                start,
                end,
                start_excl,
                end_excl,
                ..
            } => Range {
                field,
                start,
                end,
                start_excl,
                end_excl,
                boost: new,
            },
            Every { field, .. } => Every { field, boost: new },
            Or(subs, _) => Or(subs, new),
            And(subs, _) => And(subs, new),
            Not(q, _) => Not(q, new),
            AndNot(a, b) => AndNot(Box::new(a.with_boost(new)), b),
            Require(a, b) => Require(Box::new(a.with_boost(new)), b),
            AndMaybe(a, b) => AndMaybe(Box::new(a.with_boost(new)), Box::new(b.with_boost(new))),
            Null => Null,
        }
    }
}

/// Normalizes an OR (`or`) or AND group.
fn compound(or: bool, subs: Vec<WhooshQuery>, boost: f32) -> WhooshQuery {
    use WhooshQuery::*;
    let mut flat = Vec::with_capacity(subs.len());
    for sub in subs {
        match (sub.normalize(), or) {
            (Or(inner, b), true) | (And(inner, b), false) => {
                flat.extend(inner.into_iter().map(|q| {
                    let own = q.own_boost();
                    q.with_boost(own * b)
                }))
            }
            (q, _) => flat.push(q),
        }
    }
    if flat.iter().all(|q| matches!(q, Null)) {
        return Null;
    }
    if flat
        .iter()
        .any(|q| matches!(q, Every { field, .. } if field.is_empty()))
    {
        return Every {
            field: String::new(),
            boost: 1.0,
        };
    }

    let mut every_fields: Vec<String> = Vec::new();
    let mut i = 0;
    while i < flat.len() {
        if flat[i]
            .field()
            .is_some_and(|f| every_fields.iter().any(|e| e == f))
        {
            flat.remove(i);
            continue;
        }
        if matches!(flat[i], Range { .. }) {
            let mut j = i + 1;
            while j < flat.len() {
                if overlaps(&flat[i], &flat[j]) {
                    let other = flat.remove(j);
                    let merged = merge(&flat[i], &other, !or);
                    flat[i] = merged;
                } else {
                    j += 1;
                }
            }
            let range = std::mem::replace(&mut flat[i], Null);
            flat[i] = range.normalize();
        }
        if let Every { field, .. } = &flat[i] {
            every_fields.push(field.clone());
        }
        i += 1;
    }

    // Duplicates go (Python's set of seen queries), found through a hash of each query.
    let mut kept: Vec<WhooshQuery> = Vec::with_capacity(flat.len());
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(flat.len());
    for q in flat {
        let covered = !matches!(q, Every { .. })
            && q.field()
                .is_some_and(|f| every_fields.iter().any(|e| e == f));
        if covered || matches!(q, Null) {
            continue;
        }
        let fingerprint = q.fingerprint();
        match seen.get(&fingerprint) {
            Some(&k) if kept[k] == q => continue,
            // Two different queries with one fingerprint: compare with every kept one.
            Some(_) if kept.contains(&q) => continue,
            Some(_) => {}
            None => {
                seen.insert(fingerprint, kept.len());
            }
        }
        kept.push(q);
    }
    match kept.len() {
        0 => Null,
        1 => {
            let only = kept.pop().unwrap_or(Null);
            let own = only.own_boost();
            if own == 1.0 && boost == 1.0 {
                only
            } else {
                only.with_boost(own * boost)
            }
        }
        _ if or => Or(kept, boost),
        _ => And(kept, boost),
    }
}

/// A range bound as Whoosh compares them: open start lowest, open end highest, an exclusive
/// start just above its text and an exclusive end just below.
#[derive(PartialEq, Eq, PartialOrd, Ord, Clone)]
enum Key {
    Lowest,
    Text(String),
    Highest,
}

type Bound = (Key, i8);

fn bounds(q: &WhooshQuery) -> Option<(&str, Bound, Bound)> {
    let WhooshQuery::Range {
        field,
        start,
        end,
        start_excl,
        end_excl,
        ..
    } = q
    else {
        return None;
    };
    let start = match start {
        None => (Key::Lowest, 0),
        Some(s) => (Key::Text(s.clone()), i8::from(*start_excl)),
    };
    let end = match end {
        None => (Key::Highest, 0),
        Some(e) => (Key::Text(e.clone()), -i8::from(*end_excl)),
    };
    Some((field, start, end))
}

fn overlaps(a: &WhooshQuery, b: &WhooshQuery) -> bool {
    let (Some((fa, s1, e1)), Some((fb, s2, e2))) = (bounds(a), bounds(b)) else {
        return false;
    };
    let within = |x: &Bound, lo: &Bound, hi: &Bound| x >= lo && x <= hi;
    fa == fb
        && (within(&s1, &s2, &e2)
            || within(&e1, &s2, &e2)
            || within(&s2, &s1, &e1)
            || within(&e2, &s1, &e1))
}

/// Two overlapping ranges of one field as one: the containing one, else the intersection
/// (`intersect`, in an AND) or the union.
fn merge(a: &WhooshQuery, b: &WhooshQuery, intersect: bool) -> WhooshQuery {
    let (Some((field, s1, e1)), Some((_, s2, e2))) = (bounds(a), bounds(b)) else {
        return a.clone();
    };
    let (start, end) = if s1 >= s2 && e1 <= e2 {
        (s2, e2)
    } else if s2 >= s1 && e2 <= e1 {
        (s1, e1)
    } else if intersect {
        (s1.max(s2), e1.min(e2))
    } else {
        (s1.min(s2), e1.max(e2))
    };
    let text = |k: Key| match k {
        Key::Text(t) => Some(t),
        Key::Lowest | Key::Highest => None,
    };
    WhooshQuery::Range {
        field: field.to_string(),
        start_excl: start.1 == 1,
        end_excl: end.1 == -1,
        start: text(start.0),
        end: text(end.0),
        boost: a.own_boost().max(b.own_boost()),
    }
}
