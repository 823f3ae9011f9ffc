//! Unit tests of the operations' semantics.

use super::*;

fn entity(name: &str, observations: &[&str]) -> Entity {
    Entity {
        name: name.into(),
        entity_type: "person".into(),
        observations: observations.iter().map(|s| s.to_string()).collect(),
    }
}

fn relation(from: &str, to: &str) -> Relation {
    Relation {
        from: from.into(),
        to: to.into(),
        relation_type: "knows".into(),
    }
}

#[test]
fn duplicates_are_judged_against_the_graph_before_the_call() {
    let mut graph = Graph::default();
    let added = graph
        .create_entities(vec![entity("a", &[]), entity("a", &["x"])])
        .unwrap();
    assert_eq!(added.len(), 2, "the reference keeps both");
    assert!(graph
        .create_entities(vec![entity("a", &[])])
        .unwrap()
        .is_empty());
    let added = graph
        .create_relations(vec![relation("a", "b"), relation("a", "b")])
        .unwrap();
    assert_eq!(added.len(), 2);
    assert!(graph
        .create_relations(vec![relation("a", "b")])
        .unwrap()
        .is_empty());
}

#[test]
fn observations_go_to_the_first_entity_and_a_missing_one_fails() {
    let mut graph = Graph::default();
    graph
        .create_entities(vec![entity("Zoë", &["likes tea"])])
        .unwrap();
    let added = graph
        .add_observations(vec![ObservationAddition {
            entity_name: "Zoë".into(),
            contents: vec!["likes tea".into(), "plays go".into()],
        }])
        .unwrap();
    assert_eq!(added[0].added_observations, vec!["plays go".to_string()]);
    let error = graph
        .add_observations(vec![ObservationAddition {
            entity_name: "nobody".into(),
            contents: vec![],
        }])
        .unwrap_err();
    assert_eq!(error.to_string(), "Entity with name nobody not found");
    // A call failing after a first addition changes nothing either.
    let before = graph.clone();
    assert!(graph
        .add_observations(vec![
            ObservationAddition {
                entity_name: "Zoë".into(),
                contents: vec!["sings".into()],
            },
            ObservationAddition {
                entity_name: "nobody".into(),
                contents: vec![],
            },
        ])
        .is_err());
    assert_eq!(graph, before);

    graph.delete_observations(&[ObservationDeletion {
        entity_name: "nobody".into(),
        observations: vec!["x".into()],
    }]);
    assert_eq!(graph.search_nodes("PLAYS").entities.len(), 1);
    graph.delete_observations(&[ObservationDeletion {
        entity_name: "Zoë".into(),
        observations: vec!["plays go".into()],
    }]);
    assert!(graph.search_nodes("plays").entities.is_empty());
    assert_eq!(graph.search_nodes("ZOË").entities.len(), 1);
    // A query never matches across two fields, NUL or not.
    assert!(graph.search_nodes("zoë\0person").entities.is_empty());
    assert!(graph.search_nodes("zoëperson").entities.is_empty());
}

#[test]
fn deleting_an_entity_deletes_its_relations() {
    let mut graph = Graph::default();
    graph
        .create_entities(vec![entity("a", &[]), entity("b", &[]), entity("c", &[])])
        .unwrap();
    graph
        .create_relations(vec![relation("a", "b"), relation("b", "c")])
        .unwrap();
    assert_eq!(graph.open_nodes(&["a".into()]).relations.len(), 1);
    graph.delete_entities(&["a".into(), "missing".into()]);
    let snapshot = graph.snapshot();
    assert_eq!(snapshot.entities.len(), 2);
    assert_eq!(snapshot.relations, vec![relation("b", "c")]);
    graph.delete_relations(&[relation("b", "c"), relation("x", "y")]);
    assert!(graph.snapshot().relations.is_empty());
    // A deleted name can be created again; a kept one cannot.
    let again = graph
        .create_entities(vec![entity("a", &[]), entity("b", &[])])
        .unwrap();
    assert_eq!(again, vec![entity("a", &[])]);
}

#[test]
fn renumbering_carries_the_items_a_write_must_visit() {
    let mut graph = Graph::with_next_serials(u32::MAX - 2, u32::MAX - 1);
    graph
        .create_entities(vec![entity("a", &[]), entity("b", &[])])
        .unwrap();
    graph.create_relations(vec![relation("a", "b")]).unwrap();
    let touched = graph.take_touched();
    assert_eq!(
        touched,
        vec![
            Item::Entity(u32::MAX - 2),
            Item::Entity(u32::MAX - 1),
            Item::Relation(u32::MAX - 1)
        ]
    );
    graph.begin_write(touched);
    // While the write is in flight: b and its relation go, and c's creation runs the entity
    // serials out, renumbering everything.
    graph.delete_entities(&["b".into()]);
    graph.create_entities(vec![entity("c", &["x"])]).unwrap();
    graph.create_relations(vec![relation("a", "c")]).unwrap();
    assert_eq!(
        graph.take_in_flight(),
        vec![Some(Item::Entity(0)), None, None],
        "a kept under its new serial, the deleted ones forgotten"
    );
    assert_eq!(
        graph.take_touched(),
        vec![Item::Entity(1), Item::Relation(0)]
    );
    assert_eq!(
        graph.open_nodes(&["c".into()]).relations,
        vec![relation("a", "c")]
    );
}

#[test]
fn the_bounds_are_the_graphs_own() {
    let mut graph = Graph::with_bounds(GraphBounds {
        max_entities: 2,
        max_relations: 1,
        ..GraphBounds::default()
    });
    graph
        .create_entities(vec![entity("a", &[]), entity("b", &[])])
        .unwrap();
    let before = graph.clone();
    let error = graph.create_entities(vec![entity("c", &[])]).unwrap_err();
    assert!(error.to_string().contains("maximum of 2"), "{error}");
    assert!(graph
        .create_entities(vec![entity("a", &[])])
        .unwrap()
        .is_empty());
    graph.create_relations(vec![relation("a", "b")]).unwrap();
    assert!(graph.create_relations(vec![relation("b", "a")]).is_err());
    assert_eq!(graph.entities, before.entities, "a refusal changes nothing");
}

/// The graph's text is bounded (issue 76, D3: a 200 MB graph took 2.2 GB to read), every
/// refusal changes nothing, and deletions give the bytes back.
#[test]
fn the_graphs_text_is_bounded_and_counted_as_it_changes() {
    let mut graph = Graph::with_bounds(GraphBounds {
        max_bytes: 40,
        ..GraphBounds::default()
    });
    // "a" + "person" + "12345" = 12 bytes.
    graph
        .create_entities(vec![entity("a", &["12345"])])
        .unwrap();
    graph.create_relations(vec![relation("a", "b")]).unwrap(); // 7 bytes
    assert_eq!(graph.text_bytes(), 19);
    let before = graph.clone();
    let error = graph
        .create_entities(vec![entity("b", &["x".repeat(20).as_str()])])
        .unwrap_err();
    assert!(error.to_string().contains("--max-graph-bytes"), "{error}");
    let error = graph
        .add_observations(vec![ObservationAddition {
            entity_name: "a".into(),
            contents: vec!["y".repeat(22)],
        }])
        .unwrap_err();
    assert!(error.to_string().contains("maximum of 40"), "{error}");
    assert!(graph
        .create_relations(vec![Relation {
            from: "a".repeat(30),
            to: "b".into(),
            relation_type: "t".into(),
        }])
        .is_err());
    assert_eq!(graph, before, "a refusal changes nothing");

    graph
        .add_observations(vec![ObservationAddition {
            entity_name: "a".into(),
            contents: vec!["y".repeat(21)],
        }])
        .unwrap();
    assert_eq!(graph.text_bytes(), 40);
    graph.delete_observations(&[ObservationDeletion {
        entity_name: "a".into(),
        observations: vec!["12345".into()],
    }]);
    assert_eq!(graph.text_bytes(), 35);
    graph.delete_entities(&["a".to_string()]);
    assert_eq!(
        graph.text_bytes(),
        0,
        "the entity and its relation are gone"
    );
    graph.create_entities(vec![entity("c", &["ok"])]).unwrap();
    assert_eq!(graph.text_bytes(), size::total(&graph.snapshot().entities));
}
