//! Bad input gets a typed error, never a panic, and never loses what is already stored.

use std::path::Path;

use mb_engine::{
    Batch, Engine, EngineOptions, Error, NamespaceOptions, NewRecord, RecordId, Space,
};

fn engine(dir: &Path) -> Engine {
    let e = Engine::open(dir.join("e"), {
        let mut built = EngineOptions::default();
        built.max_text_bytes = 1 << 20;
        built
    })
    .unwrap();
    e.create_namespace("n", NamespaceOptions::default())
        .unwrap();
    e.create_space(Space::new("s", 4)).unwrap();
    e
}

fn assert_intact(e: &Engine, id: RecordId) {
    assert_eq!(e.count("n").unwrap(), 1);
    assert_eq!(
        e.get("n", id).unwrap().unwrap().text,
        "a safe memory about tea"
    );
    assert_eq!(e.search_text("n", "tea", 5).unwrap().len(), 1);
    assert_eq!(
        e.search_vector("n", "s", &[1.0, 0.0, 0.0, 0.0], 5)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn invalid_records_are_rejected_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path());
    let id = e
        .put(
            "n",
            NewRecord::new("a safe memory about tea").with_vector("s", vec![1.0, 0.0, 0.0, 0.0]),
        )
        .unwrap();

    let err = e
        .put("n", NewRecord::new("x").with_vector("s", vec![1.0, 2.0]))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::DimensionMismatch {
                expected: 4,
                got: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("\"s\""),
        "error names the space: {err}"
    );
    let err = e
        .put(
            "n",
            NewRecord::new("x").with_vector("s", vec![f32::NAN, 0.0, 0.0, 0.0]),
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::NonFiniteVector { index: 0, .. }),
        "{err}"
    );
    let err = e
        .put("n", NewRecord::new("x").with_vector("nope", vec![1.0; 4]))
        .unwrap_err();
    assert!(
        matches!(err, Error::UnknownSpace(ref s) if s == "nope"),
        "{err}"
    );
    assert!(
        matches!(e.put("nobody", NewRecord::new("x")), Err(Error::UnknownNamespace(ref n)) if n == "nobody")
    );
    assert!(matches!(
        e.search_text("nobody", "x", 1),
        Err(Error::UnknownNamespace(_))
    ));
    assert!(matches!(
        e.put("n", NewRecord::new("")),
        Err(Error::EmptyRecord)
    ));
    assert!(matches!(
        e.put("n", NewRecord::new(" \n\t ")),
        Err(Error::EmptyRecord)
    ));
    let huge = "memory ".repeat(200_000);
    let err = e.put("n", NewRecord::new(huge)).unwrap_err();
    assert!(
        matches!(err, Error::TextTooLarge { max: 1_048_576, .. }),
        "{err}"
    );
    assert!(matches!(
        e.update("n", RecordId(999_999), NewRecord::new("x")),
        Err(Error::RecordNotFound { id: 999_999, .. })
    ));
    assert!(matches!(
        e.search_vector("n", "s", &[1.0], 3),
        Err(Error::DimensionMismatch { .. })
    ));
    assert!(!e.delete("n", RecordId(424_242)).unwrap());

    // A batch with one bad operation stores nothing of it.
    let mut batch = Batch::new();
    batch.put(NewRecord::new("would be fine"));
    batch.put(NewRecord::new("bad").with_vector("s", vec![0.0; 3]));
    assert!(e.write("n", batch).is_err());
    assert_intact(&e, id);

    // Odd but valid input is stored and findable.
    let odd = "\u{FFFD}\u{FFFD} broken bytes \u{0} nul and emoji 🦀 crab";
    let odd_id = e.put("n", NewRecord::new(odd)).unwrap();
    assert_eq!(e.search_text("n", "crab", 1).unwrap()[0].record.id, odd_id);
    let big = format!("{} needle", "hay ".repeat(100_000));
    let big_id = e.put("n", NewRecord::new(big)).unwrap();
    assert_eq!(
        e.search_text("n", "needle", 1).unwrap()[0].record.id,
        big_id
    );
    // Zero vectors are allowed: they match nothing better than anything else.
    e.put("n", NewRecord::new("zero").with_vector("s", vec![0.0; 4]))
        .unwrap();
    e.delete("n", odd_id).unwrap();
    e.delete("n", big_id).unwrap();
    let zero = e.search_text("n", "zero", 1).unwrap()[0].record.id;
    e.delete("n", zero).unwrap();
    assert_intact(&e, id);

    assert!(matches!(
        e.create_namespace("n", NamespaceOptions::default()),
        Err(Error::NamespaceExists(_))
    ));
    assert!(matches!(
        e.create_namespace("", NamespaceOptions::default()),
        Err(Error::InvalidNamespaceName { .. })
    ));
    assert!(matches!(
        e.create_namespace("a\nb", NamespaceOptions::default()),
        Err(Error::InvalidNamespaceName { .. })
    ));
    assert!(matches!(
        e.create_space(Space::new("s", 8)),
        Err(Error::SpaceConflict {
            existing: 4,
            requested: 8,
            ..
        })
    ));
    assert!(matches!(
        e.create_space(Space::new("z", 0)),
        Err(Error::InvalidSpace { .. })
    ));
    assert!(matches!(
        e.create_space(Space::new("", 3)),
        Err(Error::InvalidSpace { .. })
    ));
    assert!(matches!(
        e.create_space(Space::new("huge", mb_engine::MAX_DIM + 1)),
        Err(Error::InvalidSpace {
            reason: "dimension above 65 536",
            ..
        })
    ));
    assert!(e
        .create_space(Space::new("widest", mb_engine::MAX_DIM))
        .is_ok());
    let long_name = "n".repeat(mb_engine::MAX_SPACE_NAME + 1);
    assert!(matches!(
        e.create_space(Space::new(long_name, 3)),
        Err(Error::InvalidSpace { .. })
    ));
    assert_eq!(
        e.space("s").map(|s| s.dim),
        Some(4),
        "the first definition stands"
    );
    assert!(
        e.space("z").is_none() && e.space("").is_none(),
        "refused spaces are not made"
    );
    assert_intact(&e, id);
}

#[test]
fn directories_that_are_not_engines_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("photos");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("cat.jpg"), b"not a database").unwrap();
    let err = Engine::open(&other, EngineOptions::default())
        .err()
        .unwrap();
    assert!(matches!(err, Error::NotAnEngine { .. }), "{err}");
    assert!(err.to_string().contains("photos"), "names the path: {err}");
    assert_eq!(
        std::fs::read(other.join("cat.jpg")).unwrap(),
        b"not a database"
    );

    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(
        Engine::open(&file, EngineOptions::default()),
        Err(Error::NotAnEngine { .. })
    ));

    let missing = dir.path().join("missing");
    let strict = {
        let mut built = EngineOptions::default();
        built.create_if_missing = false;
        built
    };
    assert!(matches!(
        Engine::open(&missing, strict),
        Err(Error::Missing { .. })
    ));
    assert!(!missing.exists());
}

#[test]
fn other_formats_are_refused_without_damage() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path());
    let id = e
        .put(
            "n",
            NewRecord::new("a safe memory about tea").with_vector("s", vec![1.0, 0.0, 0.0, 0.0]),
        )
        .unwrap();
    e.close().unwrap();
    let marker = dir.path().join("e").join("MEMORY_ENGINE");
    let original = std::fs::read_to_string(&marker).unwrap();
    std::fs::write(
        &marker,
        original.replace(
            &format!("format {}", mb_engine::ENGINE_FORMAT),
            "format 999",
        ),
    )
    .unwrap();
    let err = Engine::open(dir.path().join("e"), EngineOptions::default())
        .err()
        .unwrap();
    assert!(
        matches!(err, Error::IncompatibleFormat { found: 999, .. }),
        "{err}"
    );
    std::fs::write(&marker, "garbage").unwrap();
    assert!(matches!(
        Engine::open(dir.path().join("e"), EngineOptions::default()),
        Err(Error::NotAnEngine { .. })
    ));
    std::fs::write(&marker, original).unwrap();
    let e = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    assert_intact(&e, id);
}

#[cfg(unix)]
#[test]
fn non_utf8_paths_are_refused_cleanly() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"mem\xff\xfeory"));
    let err = Engine::open(&path, EngineOptions::default()).err().unwrap();
    assert!(matches!(err, Error::NonUtf8Path { .. }), "{err}");
    assert!(err.to_string().contains("UTF-8"));
    assert!(!path.exists(), "nothing is created");
}

/// An engine in `dir` whose namespace `n` holds three records with text and a vector in `s`,
/// two of them about tea.
fn tea_and_coffee(dir: &Path) -> Engine {
    let e = engine(dir);
    for text in ["tea in the morning", "green tea", "coffee"] {
        e.put(
            "n",
            NewRecord::new(text).with_vector("s", vec![1.0, 0.5, 0.0, 0.0]),
        )
        .unwrap();
    }
    e
}

#[test]
fn a_huge_k_returns_the_whole_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let e = tea_and_coffee(dir.path());
    let query = [1.0, 0.0, 0.0, 0.0];
    assert_eq!(e.search_text("n", "tea", usize::MAX).unwrap().len(), 2);
    for syntax in [
        mb_engine::QuerySyntax::Plain,
        mb_engine::QuerySyntax::Whoosh,
    ] {
        assert_eq!(
            e.search_query("n", "tea", syntax, usize::MAX)
                .unwrap()
                .len(),
            2
        );
    }
    assert_eq!(
        e.search_vector("n", "s", &query, usize::MAX).unwrap().len(),
        3
    );
    let mut hybrid = mb_engine::HybridQuery::new("tea", "s", query.to_vec(), usize::MAX);
    assert_eq!(e.search_hybrid("n", &hybrid).unwrap().len(), 3);
    hybrid.candidates = Some(usize::MAX);
    assert_eq!(e.search_hybrid("n", &hybrid).unwrap().len(), 3);
}

/// A fusion constant that cannot rank (issue 76, D8: NaN gave all-NaN scores, a negative one
/// an infinite top score or an inverted ranking, an infinite one all zeros) is refused by
/// name on both hybrid entry points; 0 and the default rank.
#[test]
fn a_fusion_constant_that_cannot_rank_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = tea_and_coffee(dir.path());
    let mut hybrid = mb_engine::HybridQuery::new("tea", "s", vec![1.0, 0.0, 0.0, 0.0], 3);
    for bad in [f32::NAN, -1.0, -0.5, f32::INFINITY, f32::NEG_INFINITY] {
        hybrid.rrf_k = bad;
        for found in [
            e.search_hybrid("n", &hybrid),
            e.search_hybrid_filtered("n", &hybrid, &mb_engine::Filter::default()),
        ] {
            let error = found.unwrap_err();
            assert!(
                matches!(error, Error::InvalidQuery { field: "rrf_k", .. }),
                "{bad}: {error}"
            );
            assert!(error.to_string().contains("rrf_k"), "{error}");
        }
    }
    for good in [0.0, 60.0] {
        hybrid.rrf_k = good;
        let found = e.search_hybrid("n", &hybrid).unwrap();
        assert_eq!(found.len(), 3);
        assert!(found
            .iter()
            .all(|hit| hit.score.is_finite() && hit.score > 0.0));
    }
}
