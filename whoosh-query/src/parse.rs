//! The parser: Whoosh 2.7.4's default `QueryParser` with an OR group, as MemoryBench's BM25
//! baselines build it (`QueryParser(field, schema, group=OrGroup).parse(question)`).

use super::build::{truthy, Fields};
use super::syntax::{self, Node};
use super::{tag, QueryAnalyzer, WhooshQuery};

/// Parses `text` as Whoosh query syntax into the normalized query Whoosh would run.
///
/// `default_field` is the analyzed text field unfielded clauses search; `fields` are the
/// schema's field names (`field:` with any other name is plain text, as with Whoosh's
/// `remove_unknown`), and every field but the default is an identifier field, whose text is one
/// term taken as written. Never fails: where Whoosh itself raises (a `NOT` left with nothing to
/// negate, parentheses nested beyond about 500 levels) the offending clause is dropped or the
/// extra parentheses are ignored. Linear in the length of `text`, apart from operators, each of
/// which moves the nodes after it.
pub fn parse(
    text: &str,
    default_field: &str,
    fields: &[&str],
    analyzer: &dyn QueryAnalyzer,
) -> WhooshQuery {
    let fields = Fields {
        default: default_field,
        all: fields,
        analyzer,
    };
    let mut group = syntax::groups(tag::tag(text));
    syntax::clean_boosts(&mut group);
    syntax::wildcards(&mut group);
    let mut group = syntax::fieldnames(group, &|name| fields.known(name));
    syntax::remove_space(&mut group);
    let mut group = syntax::boosts(group);
    syntax::operators(&mut group);
    fields
        .query(&Node::Group(group))
        .filter(truthy)
        .unwrap_or(WhooshQuery::Null)
        .normalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mb_text::Analyzer;

    fn parsed(text: &str) -> String {
        parse(text, "content", &["doc_id", "content"], &Analyzer::Standard).to_string()
    }

    /// Each case with the `repr` Whoosh 2.7.4 prints for it (`QueryParser("content", schema,
    /// group=OrGroup)` over upstream's BM25 schema).
    #[test]
    fn matches_whoosh_on_each_construct() {
        let cases = [
            (
                "What car does he drive?",
                "Or([Term('content', 'what'), Term('content', 'car'), Term('content', 'does'), \
                 Term('content', 'he'), Wildcard('content', 'drive?')])",
            ),
            (
                "drive? the car",
                "Or([Wildcard('content', 'drive?'), Term('content', 'car')])",
            ),
            (
                "\"Charlotte's Web\" author^2",
                "Or([Phrase('content', ['charlotte', 'web'], slop=1, boost=1.000000), \
                 Term('content', 'author', boost=2.0)])",
            ),
            (
                "car^2 OR (bus ^3 train)^0.5",
                "Or([Term('content', 'car', boost=2.0), Term('content', 'bus', boost=1.5), \
                 Term('content', 'train', boost=0.5)])",
            ),
            (
                "apple AND banana OR cherry ANDNOT durian",
                "AndNot((Or([And([Term('content', 'apple'), Term('content', 'banana')]), \
                 Term('content', 'cherry')]), Term('content', 'durian')))",
            ),
            (
                "NOT dogs cats",
                "Or([Not(Term('content', 'dogs')), Term('content', 'cats')])",
            ),
            (
                "title:cats doc_id:Foo content:Birds",
                "Or([Term('content', 'title'), Term('content', 'cats'), Term('doc_id', 'Foo'), \
                 Term('content', 'birds')])",
            ),
            (
                "5:30 pm e.g., U.S.A. and 10:30am",
                "Or([Term('content', '30'), Term('content', 'pm'), Term('content', 'e.g'), \
                 Term('content', 'u.s.a'), Term('content', '10'), Term('content', '30am')])",
            ),
            (
                "[apple TO pear] {b TO c] [TO m}",
                "TermRange('content', None, 'pear', False, False, boost=1.0, constantscore=True)",
            ),
            ("*:* anything", "Every(None, boost=1.0)"),
            (
                "comp* *ing c?t",
                "Or([Prefix('content', 'comp'), Wildcard('content', '*ing'), \
                 Wildcard('content', 'c?t')])",
            ),
            (
                "'single quoted words' don't",
                "Or([Term('content', 'single'), Term('content', 'quoted'), \
                 Term('content', 'words'), Term('content', 'don')])",
            ),
            (
                "(unclosed group words) extra) ((",
                "Or([Term('content', 'unclosed'), Term('content', 'group'), \
                 Term('content', 'words'), Term('content', 'extra')])",
            ),
            ("a:b:c word", "Term('content', 'word')"),
            (
                "\"the\" \"\" \"one word\" \"two words\"~3",
                "Or([Phrase('content', ['one', 'word'], slop=1, boost=1.000000), \
                 Phrase('content', ['two', 'words'], slop=3, boost=1.000000)])",
            ),
            (
                "REQUIRE first second REQUIRE third",
                "Or([Term('content', 'first'), Require((Term('content', 'second'), \
                 Term('content', 'third')))])",
            ),
            (
                "café ÜBER 北京大学 naïve",
                "Or([Term('content', 'café'), Term('content', 'über'), \
                 Term('content', '北京大学'), Term('content', 'naïve')])",
            ),
            (
                "ANDMAYBE alpha ANDMAYBE beta gamma",
                "Or([Term('content', 'andmaybe'), AndMaybe((Term('content', 'alpha'), \
                 Term('content', 'beta'))), Term('content', 'gamma')])",
            ),
            ("the a of", "<_NullQuery>"),
            ("", "<_NullQuery>"),
            ("*", "Every('content', boost=1.0)"),
            (
                "[photo TO x]",
                "TermRange('content', 'pho', 'to x', False, False, boost=1.0, constantscore=True)",
            ),
            ("a\u{61F}", "Term('content', 'a\u{61F}')"),
        ];
        for (text, want) in cases {
            assert_eq!(parsed(text), want, "{text}");
        }
    }

    /// Whoosh raises IndexError on these; the clause is dropped instead.
    #[test]
    fn a_not_with_nothing_to_negate_is_dropped() {
        assert_eq!(parsed("NOT NOT apple"), "Term('content', 'apple')");
        assert_eq!(parsed("NOT AND apple"), "Term('content', 'apple')");
    }

    #[test]
    fn python_repr_quoting_and_numbers() {
        assert_eq!(parsed("doc_id:'it's'"), "Term('doc_id', \"it's\")");
        assert_eq!(parsed("doc_id:'a\"b'c'"), "Term('doc_id', 'a\"b\\'c')");
        assert_eq!(
            parsed("[a\tb TO c]"),
            "TermRange('content', 'a\\tb', 'c', False, False, boost=1.0, constantscore=True)"
        );
        assert_eq!(parsed("word^.5"), "Term('content', 'word', boost=0.5)");
        assert_eq!(
            parsed("word^100000000000000000"),
            "Term('content', 'word', boost=1e+17)"
        );
        assert_eq!(
            parsed("word^0.0001"),
            "Term('content', 'word', boost=0.0001)"
        );
        assert_eq!(
            parsed("word^0.00001"),
            "Term('content', 'word', boost=1e-05)"
        );
        assert_eq!(parsed("word^ x"), "Term('content', 'word')");
    }

    /// Deep nesting and long operator chains neither overflow the stack nor take long.
    #[test]
    fn hostile_input_is_bounded() {
        let deep = format!("{}apple{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(parsed(&deep), "Term('content', 'apple')");
        let nots = format!("{}apple{}", "(NOT ".repeat(5_000), ")".repeat(5_000));
        assert!(!parsed(&nots).is_empty());
        let chain = format!("apple{}", " ANDNOT pear".repeat(5_000));
        // The first 64 operators nest; the rest are words.
        let chain = parsed(&chain);
        assert!(chain.starts_with("Or([AndNot((AndNot(("), "{chain}");
        assert_eq!(chain.matches("AndNot((").count(), 64);
        assert!(chain.contains("Term('content', 'andnot')"));
        let brackets = "[{'\"".repeat(5_000);
        assert_eq!(parsed(&brackets), "<_NullQuery>");
    }
}
