//! `search_nodes` from the trigram index against the plain scan it replaced, on pseudo-random
//! graphs changed by every operation: the answers must be identical, order included.

use super::*;
use crate::graph::index::Lookups;
use crate::graph::model::{Entity, ObservationAddition, ObservationDeletion, Relation};
use crate::graph::node::Node;
use crate::graph::trigram::TrigramIndex;

/// The reference's scans: every entity's folded text (or field by field for a query holding a
/// NUL), then every relation touching a found entity.
fn scan(graph: &Graph, query: &str) -> KnowledgeGraph {
    let query = query.to_lowercase();
    let finder = memchr::memmem::Finder::new(query.as_bytes());
    scanned(graph, |n| match query.contains('\0') {
        false => finder.find(n.folded.as_bytes()).is_some(),
        true => super::fields_contain(&n.value, &query),
    })
}

/// The entities `keep` accepts and the relations touching them, found by visiting everything.
fn scanned(graph: &Graph, keep: impl Fn(&Node<Entity>) -> bool) -> KnowledgeGraph {
    let entities: Vec<Entity> = graph
        .entities
        .iter()
        .filter(|n| keep(n))
        .map(|n| n.value.clone())
        .collect();
    if entities.is_empty() {
        return KnowledgeGraph::default();
    }
    let names: std::collections::HashSet<&str> = entities.iter().map(|e| e.name.as_str()).collect();
    let relations = graph
        .relations
        .iter()
        .filter(|n| names.contains(n.value.from.as_str()) || names.contains(n.value.to.as_str()))
        .map(|n| n.value.clone())
        .collect();
    KnowledgeGraph {
        entities,
        relations,
    }
}

/// A small deterministic generator (splitmix64), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces of text: ASCII in both cases, multi-byte letters whose lowercase differs in length
/// (İ, ẞ) or by context (Σ), CJK, separators, and a rare NUL.
const PIECES: &[&str] = &[
    "ab", "AB", "abc", "Bc", "ca", "x", " ", "-", "é", "É", "ß", "ẞ", "İ", "i", "Σ", "σ", "日本",
    "本語", "ñ", "Ñ", "zz", "\0",
];

fn text(rng: &mut Rng, max_pieces: usize) -> String {
    let pieces = 1 + rng.below(max_pieces);
    (0..pieces).map(|_| rng.pick(PIECES)).collect()
}

fn name(rng: &mut Rng) -> String {
    // A small pool: names collide, are deleted and created again.
    format!("{}{}", rng.pick(&["Ab", "ab", "É", "n"]), rng.below(40))
}

/// A substring of `s` on char boundaries.
fn slice(rng: &mut Rng, s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let start = rng.below(chars.len() + 1);
    let len = rng.below(chars.len() - start + 1);
    chars[start..start + len].iter().collect()
}

fn queries(rng: &mut Rng, graph: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..40 {
        let query = match (
            rng.below(6),
            graph.entities.get(rng.below(graph.entities.len())),
        ) {
            (0, _) | (_, None) => text(rng, 4),
            (1, Some(n)) => {
                // Across the boundary of two fields, with or without the NUL joining them.
                let fields: Vec<&String> = [&n.value.name, &n.value.entity_type]
                    .into_iter()
                    .chain(&n.value.observations)
                    .collect();
                let at = rng.below(fields.len());
                let next = fields.get(at + 1).map_or("", |s| s.as_str());
                let joint = if rng.below(2) == 0 { "" } else { "\0" };
                let head = fields[at]
                    .chars()
                    .rev()
                    .take(1 + rng.below(3))
                    .collect::<Vec<_>>();
                let head: String = head.into_iter().rev().collect();
                let tail: String = next.chars().take(1 + rng.below(3)).collect();
                format!("{head}{joint}{tail}")
            }
            (2, Some(n)) => {
                let tail: String = n.value.name.chars().take(2).collect();
                tail.to_uppercase()
            }
            (_, Some(n)) => {
                let field = match n.value.observations.get(rng.below(3)) {
                    Some(observation) => observation.clone(),
                    None => n.value.name.clone(),
                };
                let query = slice(rng, &field);
                match rng.below(3) {
                    0 => query.to_uppercase(),
                    _ => query,
                }
            }
        };
        out.push(query);
    }
    out
}

fn entity(rng: &mut Rng) -> Entity {
    Entity {
        name: name(rng),
        entity_type: text(rng, 2),
        observations: (0..rng.below(4)).map(|_| text(rng, 5)).collect(),
    }
}

/// One random operation, of every kind that changes entities' text.
fn change(rng: &mut Rng, graph: &mut Graph) {
    let known =
        |rng: &mut Rng, graph: &Graph| match graph.entities.get(rng.below(graph.entities.len())) {
            Some(n) if rng.below(5) > 0 => n.value.name.clone(),
            _ => name(rng),
        };
    match rng.below(7) {
        0 | 1 => {
            let new = (0..1 + rng.below(3)).map(|_| entity(rng)).collect();
            let _ = graph.create_entities(new);
        }
        2 => {
            // Sometimes a missing entity after a good one: the call is undone.
            let additions = (0..1 + rng.below(3))
                .map(|_| ObservationAddition {
                    entity_name: known(rng, graph),
                    contents: (0..1 + rng.below(2)).map(|_| text(rng, 5)).collect(),
                })
                .collect();
            let _ = graph.add_observations(additions);
        }
        3 => {
            let deletions: Vec<ObservationDeletion> = (0..1 + rng.below(2))
                .map(|_| {
                    let entity_name = known(rng, graph);
                    let observations = graph
                        .entities
                        .iter()
                        .find(|n| n.value.name == entity_name)
                        .map(|n| n.value.observations.clone())
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|_| rng.below(2) == 0)
                        .collect();
                    ObservationDeletion {
                        entity_name,
                        observations,
                    }
                })
                .collect();
            graph.delete_observations(&deletions);
        }
        4 => {
            let names: Vec<String> = (0..1 + rng.below(2)).map(|_| known(rng, graph)).collect();
            graph.delete_entities(&names);
        }
        5 if rng.below(3) == 0 => {
            let relations: Vec<Relation> = (0..2)
                .filter_map(|_| graph.relations.get(rng.below(graph.relations.len())))
                .map(|n| n.value.clone())
                .collect();
            graph.delete_relations(&relations);
        }
        5 => {
            let relations = (0..2)
                .map(|_| Relation {
                    from: known(rng, graph),
                    to: known(rng, graph),
                    relation_type: "knows".into(),
                })
                .collect();
            let _ = graph.create_relations(relations);
        }
        _ => graph.append((0..rng.below(3)).map(|_| entity(rng)).collect(), vec![]),
    }
}

/// The index a graph would have if built from scratch: the live one must equal it.
fn rebuilt(graph: &Graph) -> TrigramIndex {
    let mut index = TrigramIndex::default();
    for node in &graph.entities {
        index.insert(node.serial, &node.folded);
    }
    index
}

/// The lookups a graph would have if built from scratch.
fn rebuilt_lookups(graph: &Graph) -> Lookups {
    let mut lookups = Lookups::default();
    for node in &graph.entities {
        lookups.add_entity(&node.value.name, node.serial);
    }
    for node in &graph.relations {
        lookups.add_relation(&node.value, node.serial);
    }
    lookups
}

fn check(rng: &mut Rng, graph: &Graph, matched: &mut usize) {
    assert_eq!(
        graph.trigrams,
        rebuilt(graph),
        "the index holds exactly the graph"
    );
    assert_eq!(graph.lookups, rebuilt_lookups(graph), "the lookups too");
    let mut names: Vec<String> = (0..3)
        .filter_map(|_| graph.entities.get(rng.below(graph.entities.len() + 1)))
        .map(|n| n.value.name.clone())
        .collect();
    names.push(name(rng));
    let expected = scanned(graph, |n| names.contains(&n.value.name));
    assert_eq!(graph.open_nodes(&names), expected, "open_nodes {names:?}");
    for query in queries(rng, graph) {
        let expected = scan(graph, &query);
        assert_eq!(graph.search_nodes(&query), expected, "query {query:?}");
        *matched += expected.entities.len();
    }
}

#[test]
fn the_index_answers_exactly_as_the_scan_on_random_graphs() {
    let mut matched = 0;
    for seed in 0..12 {
        let mut rng = Rng(seed);
        let mut graph = Graph::default();
        for _ in 0..150 {
            change(&mut rng, &mut graph);
            check(&mut rng, &graph, &mut matched);
        }
    }
    assert!(matched > 10_000, "the queries found things ({matched})");
}

#[test]
fn serials_running_out_renumber_the_entities() {
    let mut rng = Rng(99);
    let mut graph = Graph::with_next_serials(u32::MAX - 5, u32::MAX - 3);
    let mut matched = 0;
    for _ in 0..60 {
        change(&mut rng, &mut graph);
        check(&mut rng, &graph, &mut matched);
        let serials: Vec<u32> = graph.entities.iter().map(|n| n.serial).collect();
        assert!(
            serials.windows(2).all(|w| w[0] < w[1]),
            "serials follow creation order"
        );
        let serials: Vec<u32> = graph.relations.iter().map(|n| n.serial).collect();
        assert!(serials.windows(2).all(|w| w[0] < w[1]), "relations too");
    }
    assert!(graph.next_serial < 1000, "renumbered");
}

#[test]
fn a_failed_addition_leaves_the_index_as_it_was() {
    let mut graph = Graph::default();
    let mut rng = Rng(7);
    let _ = graph.create_entities((0..20).map(|_| entity(&mut rng)).collect());
    let before = graph.clone();
    let first = graph.entities[0].value.name.clone();
    assert!(graph
        .add_observations(vec![
            ObservationAddition {
                entity_name: first,
                contents: vec!["quite new text".into()],
            },
            ObservationAddition {
                entity_name: "nobody".into(),
                contents: vec![],
            },
        ])
        .is_err());
    assert_eq!(graph, before);
    assert!(graph.search_nodes("quite new").entities.is_empty());
}

/// Scan against index on the graph the service load test grows (32 clients' notes, 36k
/// entities) with its query (one entity by name), plus a few broad queries. Timing only:
/// `cargo test --release -p memorybench-mcp --lib -- --ignored --nocapture search_speed`.
#[test]
#[ignore]
fn search_speed() {
    use std::time::Instant;
    let (clients, entities) = (32, 36_000);
    let mut graph = Graph::default();
    let started = Instant::now();
    for made in 0..entities / clients {
        for client in 0..clients {
            let entity = Entity {
                name: format!("c{client}-e{made}."),
                entity_type: "note".into(),
                observations: vec![format!(
                    "client {client} wrote note {made} about topic {}",
                    made % 17
                )],
            };
            let _ = graph.create_entities(vec![entity]);
        }
    }
    println!(
        "{} entities created in {:?}; {} postings ({} KiB)",
        graph.entities.len(),
        started.elapsed(),
        graph.trigrams.postings(),
        graph.trigrams.postings() * 4 / 1024
    );
    let mut rng = Rng(1);
    let by_name: Vec<String> = (0..1000)
        .map(|_| {
            format!(
                "c{}-e{}.",
                rng.below(clients),
                rng.below(entities / clients)
            )
        })
        .collect();
    let broad: Vec<String> = ["note", "topic 3", "wrote note 1", "zzz", "E10."]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (label, queries) in [("1000 by-name", &by_name), ("5 broad", &broad)] {
        let started = Instant::now();
        let scanned: Vec<KnowledgeGraph> = queries.iter().map(|q| scan(&graph, q)).collect();
        let scan_time = started.elapsed();
        let started = Instant::now();
        let indexed: Vec<KnowledgeGraph> = queries.iter().map(|q| graph.search_nodes(q)).collect();
        let index_time = started.elapsed();
        assert_eq!(scanned, indexed);
        let found: usize = indexed.iter().map(|g| g.entities.len()).sum();
        println!(
            "{label} queries ({found} entities found): scan {scan_time:?}, index {index_time:?}, \
             {:.1}x",
            scan_time.as_secs_f64() / index_time.as_secs_f64().max(1e-9)
        );
    }
}
