//! Unit tests of paged reads and the reply bound.

use super::*;
use crate::limits::GraphBounds;

fn entity(name: &str, observation: &str) -> Entity {
    Entity {
        name: name.into(),
        entity_type: "t".into(),
        observations: vec![observation.into()],
    }
}

fn relation(from: &str, to: &str) -> Relation {
    Relation {
        from: from.into(),
        to: to.into(),
        relation_type: "r".into(),
    }
}

/// A graph of `n` entities `e0..` (observation "obs i") with a relation from each to the next.
fn chain(n: usize, bounds: GraphBounds) -> Graph {
    let mut graph = Graph::with_bounds(bounds);
    let names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    let entities = names
        .iter()
        .enumerate()
        .map(|(i, name)| entity(name, &format!("obs {i}")))
        .collect();
    graph.create_entities(entities).unwrap();
    let relations = names.windows(2).map(|w| relation(&w[0], &w[1])).collect();
    graph.create_relations(relations).unwrap();
    graph
}

/// Reads every page of `read_graph` with `limit`, returning the pages.
fn read_all(graph: &Graph, limit: u32) -> Vec<GraphPage> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let request = PageRequest::from_args(cursor.as_deref(), Some(limit)).unwrap();
        let page = graph.read_page(request).unwrap();
        cursor = page.next_cursor.clone();
        pages.push(page);
        if cursor.is_none() || pages.len() > 1000 {
            return pages;
        }
    }
}

#[test]
fn pages_of_read_graph_return_every_item_once_in_order() {
    let graph = chain(7, GraphBounds::default());
    let whole = graph.read_page(None).unwrap();
    assert_eq!(whole.graph, graph.snapshot());
    assert_eq!(whole.next_cursor, None);
    for limit in [1, 2, 3, 6, 7, 13, 1000] {
        let pages = read_all(&graph, limit);
        let mut joined = KnowledgeGraph::default();
        for page in &pages {
            let items = page.graph.entities.len() + page.graph.relations.len();
            assert!(
                items <= limit as usize && items > 0,
                "limit {limit}: {items}"
            );
            joined.entities.extend(page.graph.entities.iter().cloned());
            joined
                .relations
                .extend(page.graph.relations.iter().cloned());
        }
        assert_eq!(joined, graph.snapshot(), "limit {limit}");
        assert_eq!(
            pages.len(),
            13usize.div_ceil(limit as usize),
            "limit {limit}"
        );
    }
}

#[test]
fn a_cursor_survives_changes_between_pages() {
    let mut graph = chain(6, GraphBounds::default());
    let first = graph
        .read_page(PageRequest::from_args(None, Some(3)).unwrap())
        .unwrap();
    assert_eq!(first.graph.entities.len(), 3);
    // e1 (returned) and e3 (not yet) go; e9 comes.
    graph.delete_entities(&["e1".to_string(), "e3".to_string()]);
    graph.create_entities(vec![entity("e9", "late")]).unwrap();
    let rest = graph
        .read_page(PageRequest::from_args(first.next_cursor.as_deref(), Some(100)).unwrap())
        .unwrap();
    let names: Vec<&str> = rest
        .graph
        .entities
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["e4", "e5", "e9"],
        "nothing twice, the deleted skipped"
    );
    assert_eq!(rest.graph.relations, vec![relation("e4", "e5")]);
    assert_eq!(rest.next_cursor, None);
}

#[test]
fn a_page_stops_at_the_reply_bound_but_holds_one_item() {
    let bounds = GraphBounds {
        max_reply_bytes: 20,
        ..GraphBounds::default()
    };
    let mut graph = chain(4, bounds); // entities of 8 bytes ("e0" "t" "obs 0"), relations of 5
    let page = graph
        .read_page(PageRequest::from_args(None, Some(100)).unwrap())
        .unwrap();
    assert_eq!(page.graph.entities.len(), 2, "16 bytes fit, 24 do not");
    assert_eq!(page.next_cursor.as_deref(), Some("e2"));
    let error = graph.read_page(None).unwrap_err().to_string();
    assert!(
        error.contains("read_graph")
            && error.contains("--max-reply-bytes")
            && error.contains("cursor"),
        "{error}"
    );
    graph
        .create_entities(vec![entity("big", &"x".repeat(100))])
        .unwrap();
    let pages = read_all(&graph, 1000);
    let big = pages
        .iter()
        .find(|p| p.graph.entities.iter().any(|e| e.name == "big"));
    assert_eq!(
        big.map(|p| p.graph.entities.len()),
        Some(1),
        "alone, over the bound"
    );
    let error = graph.search_page("big", None).unwrap_err().to_string();
    assert!(error.contains("search_nodes"), "{error}");
    let error = graph.open_page(&["big".into()]).unwrap_err().to_string();
    assert!(error.contains("open_nodes"), "{error}");
    assert!(graph.open_page(&["e1".into()]).is_ok());
}

#[test]
fn pages_of_search_nodes_hold_matching_entities_with_their_relations() {
    let graph = chain(9, GraphBounds::default());
    let whole = graph.search_page("obs", None).unwrap();
    // Every entity the reference's scan finds, in creation order.
    let scanned: Vec<Entity> = graph
        .snapshot()
        .entities
        .into_iter()
        .filter(|e| crate::graph::query::fields_contain(e, "obs"))
        .collect();
    assert_eq!(whole.graph.entities, scanned);
    let mut cursor: Option<String> = None;
    let mut entities = Vec::new();
    loop {
        let request = PageRequest::from_args(cursor.as_deref(), Some(4)).unwrap();
        let page = graph.search_page("obs", request).unwrap();
        assert!(page.graph.entities.len() <= 4);
        for e in &page.graph.entities {
            // Each entity comes with the relations touching it.
            let touching = page
                .graph
                .relations
                .iter()
                .filter(|r| r.from == e.name || r.to == e.name)
                .count();
            let expected = graph
                .open_nodes(std::slice::from_ref(&e.name))
                .relations
                .len();
            assert_eq!(touching, expected, "{}", e.name);
        }
        entities.extend(page.graph.entities);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(entities, whole.graph.entities);
    let error = graph
        .search_page("obs", PageRequest::from_args(Some("r3"), None).unwrap())
        .unwrap_err();
    assert!(error.to_string().contains("cursor"), "{error}");
}

#[test]
fn bad_cursors_and_limits_are_refused_by_name() {
    assert_eq!(PageRequest::from_args(None, None).unwrap(), None);
    assert_eq!(
        PageRequest::from_args(Some("e5"), None).unwrap(),
        Some(PageRequest {
            cursor: Some(Cursor::Entity(5)),
            limit: crate::limits::DEFAULT_GRAPH_PAGE,
        })
    );
    for cursor in ["", "e", "x5", "e-1", "e99999999999", "ü1", "r1x"] {
        let error = PageRequest::from_args(Some(cursor), None).unwrap_err();
        assert!(
            error.to_string().contains("`cursor`"),
            "{cursor:?}: {error}"
        );
    }
    for limit in [0, 1001] {
        let error = PageRequest::from_args(None, Some(limit)).unwrap_err();
        assert!(error.to_string().contains("`limit`"), "{limit}: {error}");
    }
    for cursor in [Cursor::Entity(0), Cursor::Relation(u32::MAX - 1)] {
        assert_eq!(Cursor::parse(&cursor.encode()).unwrap(), cursor);
    }
}
