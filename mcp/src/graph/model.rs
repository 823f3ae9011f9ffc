//! The knowledge graph's data, exactly as `@modelcontextprotocol/server-memory` shapes it on the
//! wire: field names, order and descriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Drops the description schemars takes from a type's doc comment, so the schema is the
/// reference server's (which describes fields, not types).
pub fn without_description(schema: &mut schemars::Schema) {
    schema.remove("description");
}

/// A node of the graph: a named entity with a type and free-text observations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(inline, transform = without_description)]
pub struct Entity {
    /// The name of the entity.
    #[schemars(description = "The name of the entity")]
    pub name: String,
    /// The type of the entity.
    #[schemars(description = "The type of the entity")]
    pub entity_type: String,
    /// Observations about the entity, in the order they were added.
    #[schemars(description = "An array of observation contents associated with the entity")]
    pub observations: Vec<String>,
}

/// A directed, typed edge between two entity names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(inline, transform = without_description)]
pub struct Relation {
    /// The entity the relation starts at.
    #[schemars(description = "The name of the entity where the relation starts")]
    pub from: String,
    /// The entity the relation ends at.
    #[schemars(description = "The name of the entity where the relation ends")]
    pub to: String,
    /// The relation's type, in active voice ("works_at").
    #[schemars(description = "The type of the relation")]
    pub relation_type: String,
}

/// A whole graph or a part of it, as `read_graph`, `search_nodes` and `open_nodes` return it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KnowledgeGraph {
    /// Entities, in creation order.
    pub entities: Vec<Entity>,
    /// Relations, in creation order.
    pub relations: Vec<Relation>,
}

/// Observations to add to one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(inline, transform = without_description)]
pub struct ObservationAddition {
    /// The entity to add to.
    #[schemars(description = "The name of the entity to add the observations to")]
    pub entity_name: String,
    /// The observations to add.
    #[schemars(description = "An array of observation contents to add")]
    pub contents: Vec<String>,
}

/// What `add_observations` added to one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddedObservations {
    /// The entity added to.
    pub entity_name: String,
    /// The observations that were new.
    pub added_observations: Vec<String>,
}

/// Observations to delete from one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(inline, transform = without_description)]
pub struct ObservationDeletion {
    /// The entity to delete from.
    #[schemars(description = "The name of the entity containing the observations")]
    pub entity_name: String,
    /// The observations to delete.
    #[schemars(description = "An array of observations to delete")]
    pub observations: Vec<String>,
}
