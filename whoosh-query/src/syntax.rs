//! Whoosh's syntax tree and the filters that reshape it, in Whoosh's order: parentheses to
//! groups, stray boosts to words, wildcards merged with the words they touch, field names
//! applied, white space dropped, boosts applied, operators to groups.
//!
//! Nesting is bounded so that no later recursion can exhaust the stack: parentheses deeper
//! than [`MAX_GROUP_DEPTH`] are ignored (Whoosh itself fails beyond about 500 levels).

/// Parentheses nested deeper than this are ignored, with their contents kept in place.
const MAX_GROUP_DEPTH: usize = 500;

/// The characters Whoosh's wildcard tagger takes as wildcards (`*` and question marks).
pub(super) const QUESTION_MARKS: [char; 4] = ['?', '\u{55E}', '\u{61F}', '\u{1367}'];

/// What a group means once it becomes a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GroupKind {
    /// Parentheses, the top level and `OR` (the parser's default group is an OR group).
    Or,
    /// `AND`.
    And,
    /// `ANDNOT` (two nodes).
    AndNot,
    /// `ANDMAYBE` (two nodes).
    AndMaybe,
    /// `REQUIRE` (two nodes).
    Require,
    /// `NOT` (one node).
    Not,
}

impl GroupKind {
    /// Whether `a OP b OP c` collects into one group (`AND`, `OR`) rather than nesting.
    fn merging(self) -> bool {
        matches!(self, GroupKind::Or | GroupKind::And)
    }

    /// Whether a following `^boost` applies to the group (not to the binary ones).
    fn has_boost(self) -> bool {
        !matches!(
            self,
            GroupKind::AndNot | GroupKind::AndMaybe | GroupKind::Require
        )
    }
}

/// A group of nodes with its boost.
#[derive(Debug, Clone)]
pub(super) struct Group {
    pub kind: GroupKind,
    pub nodes: Vec<Node>,
    pub boost: f64,
}

impl Group {
    pub fn new(kind: GroupKind, nodes: Vec<Node>) -> Self {
        Group {
            kind,
            nodes,
            boost: 1.0,
        }
    }

    /// An empty group of the same kind and boost (Whoosh's `empty_copy`).
    fn emptied(&self) -> Group {
        Group {
            kind: self.kind,
            nodes: Vec::with_capacity(self.nodes.len()),
            boost: self.boost,
        }
    }
}

/// What a text node searches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextKind {
    /// Analyzed words.
    Word,
    /// A glob pattern.
    Wildcard,
    /// A prefix (`word*`).
    Prefix,
    /// Quoted words.
    Phrase { slop: u32 },
}

/// A node holding text: words, wildcards, prefixes and phrases.
#[derive(Debug, Clone)]
pub(super) struct TextNode {
    pub kind: TextKind,
    pub text: String,
    pub field: Option<String>,
    pub boost: f64,
}

impl TextNode {
    pub fn new(kind: TextKind, text: impl Into<String>) -> Self {
        TextNode {
            kind,
            text: text.into(),
            field: None,
            boost: 1.0,
        }
    }
}

/// A `[start TO end]` range.
#[derive(Debug, Clone)]
pub(super) struct RangeNode {
    pub start: Option<String>,
    pub end: Option<String>,
    pub start_excl: bool,
    pub end_excl: bool,
    pub field: Option<String>,
}

/// An operator before it is turned into a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// `NOT`, applying to the next node.
    Not,
    /// An operator between two nodes, making a group of this kind.
    Infix(GroupKind),
}

/// A syntax node.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Text(TextNode),
    Range(Box<RangeNode>),
    Group(Group),
    /// `name:`, with the text it was written as.
    Fieldname {
        name: String,
        original: String,
    },
    /// `^boost`, with the text it was written as.
    Boost {
        original: String,
        boost: f64,
    },
    Op(Op),
    Open,
    Close,
    Every,
    Space,
}

impl Node {
    fn word(text: impl Into<String>) -> Node {
        Node::Text(TextNode::new(TextKind::Word, text))
    }

    fn has_boost(&self) -> bool {
        match self {
            Node::Text(_) => true,
            Node::Group(g) => g.kind.has_boost(),
            _ => false,
        }
    }

    fn set_boost(&mut self, boost: f64) {
        match self {
            Node::Text(t) => t.boost = boost,
            Node::Group(g) if g.kind.has_boost() => g.boost = boost,
            _ => {}
        }
    }

    /// Gives the node (every node of a group) `field` unless it already has one.
    fn set_field(&mut self, field: &str) {
        let own = match self {
            Node::Text(t) => &mut t.field,
            Node::Range(r) => &mut r.field,
            Node::Group(g) => {
                g.nodes.iter_mut().for_each(|n| n.set_field(field));
                return;
            }
            _ => return,
        };
        if own.is_none() {
            *own = Some(field.to_string());
        }
    }
}

/// Parentheses to nested OR groups; unmatched `)` are dropped, unclosed `(` leave their
/// contents in the enclosing group.
pub(super) fn groups(flat: Group) -> Group {
    let mut stack = vec![Group::new(GroupKind::Or, Vec::new())];
    let mut ignored = 0usize;
    for node in flat.nodes {
        match node {
            Node::Open if stack.len() > MAX_GROUP_DEPTH => ignored += 1,
            Node::Open => stack.push(Group::new(GroupKind::Or, Vec::new())),
            Node::Close if ignored > 0 => ignored -= 1,
            Node::Close => {
                if stack.len() > 1 {
                    if let Some(last) = stack.pop() {
                        if let Some(parent) = stack.last_mut() {
                            parent.nodes.push(Node::Group(last));
                        }
                    }
                }
            }
            node => {
                if let Some(current) = stack.last_mut() {
                    current.nodes.push(node);
                }
            }
        }
    }
    let mut levels = stack.into_iter();
    let mut top = levels
        .next()
        .unwrap_or_else(|| Group::new(GroupKind::Or, Vec::new()));
    for level in levels {
        top.nodes.extend(level.nodes);
    }
    if top.nodes.len() == 1 && matches!(top.nodes[0], Node::Group(_)) {
        if let Some(Node::Group(mut only)) = top.nodes.pop() {
            only.boost = top.boost;
            return only;
        }
    }
    top
}

/// A boost at the top level that follows nothing boostable (white space, the start) is a word.
pub(super) fn clean_boosts(group: &mut Group) {
    for i in 0..group.nodes.len() {
        if let Node::Boost { original, .. } = &group.nodes[i] {
            if i == 0 || !group.nodes[i - 1].has_boost() {
                group.nodes[i] = Node::word(original.clone());
            }
        }
    }
}

/// Merges each wildcard with the text nodes right before and after it; a pattern whose only
/// wildcard is a final `*` becomes a prefix.
pub(super) fn wildcards(group: &mut Group) {
    let mut merged: Vec<Node> = Vec::with_capacity(group.nodes.len());
    let mut nodes = std::mem::take(&mut group.nodes).into_iter().peekable();
    while let Some(mut node) = nodes.next() {
        match &mut node {
            Node::Text(wild) if wild.kind == TextKind::Wildcard => {
                if let Some(Node::Text(next)) = nodes.next_if(|n| matches!(n, Node::Text(_))) {
                    wild.text.push_str(&next.text);
                }
                if let Some(Node::Text(prev)) = merged.pop_if(|n| matches!(n, Node::Text(_))) {
                    wild.text.insert_str(0, &prev.text);
                }
            }
            Node::Group(g) => wildcards(g),
            _ => {}
        }
        merged.push(node);
    }
    for node in merged.iter_mut() {
        if let Node::Text(t) = node {
            if t.kind == TextKind::Wildcard
                && t.text.chars().count() > 1
                && !t.text.contains(QUESTION_MARKS)
                && t.text.find('*') == Some(t.text.len() - 1)
            {
                t.kind = TextKind::Prefix;
                t.text.pop();
            }
        }
    }
    group.nodes = merged;
}

/// Applies `field:` to the node after it. Unknown field names become text: glued to the next
/// text node, or a word of their own.
pub(super) fn fieldnames(group: Group, known: &dyn Fn(&str) -> bool) -> Group {
    let mut merged = group.emptied();
    let mut pending: Option<String> = None;
    for mut node in group.nodes {
        if let Node::Fieldname { name, original } = &node {
            if !known(name) {
                pending = Some(original.clone());
                continue;
            }
        }
        if let Some(original) = pending.take() {
            match &mut node {
                Node::Text(t) => t.text.insert_str(0, &original),
                _ => merged.nodes.push(Node::word(original)),
            }
        }
        merged.nodes.push(node);
    }
    if let Some(original) = pending {
        merged.nodes.push(Node::word(original));
    }

    let mut out = merged.emptied();
    let mut nodes = merged.nodes;
    while let Some(node) = nodes.pop() {
        let mut node = match node {
            Node::Fieldname { original, .. } => Node::word(original),
            Node::Group(g) => Node::Group(fieldnames(g, known)),
            other => other,
        };
        if !matches!(node, Node::Space) {
            if let Some(Node::Fieldname { name, .. }) = nodes.last() {
                node.set_field(name);
                nodes.pop();
            }
        }
        out.nodes.push(node);
    }
    out.nodes.reverse();
    out
}

/// Drops white space at every level.
pub(super) fn remove_space(group: &mut Group) {
    group.nodes.retain(|n| !matches!(n, Node::Space));
    for node in &mut group.nodes {
        if let Node::Group(g) = node {
            remove_space(g);
        }
    }
}

/// Applies each boost to the node before it; a boost following nothing boostable is a word.
pub(super) fn boosts(group: Group) -> Group {
    let mut out = group.emptied();
    for node in group.nodes {
        let node = match node {
            Node::Group(g) => Node::Group(boosts(g)),
            Node::Boost { original, boost } => match out.nodes.last_mut() {
                Some(last) if last.has_boost() => {
                    last.set_boost(boost);
                    continue;
                }
                _ => Node::word(original),
            },
            other => other,
        };
        out.nodes.push(node);
    }
    out
}

/// Turns operators into groups: `NOT` first, then `AND`, `OR`, `ANDNOT`, `ANDMAYBE`, `REQUIRE`
/// (Whoosh's precedence), each left to right; then the same inside every group.
pub(super) fn operators(group: &mut Group) {
    use GroupKind::*;
    let nodes = &mut group.nodes;
    let mut i = 0;
    while i < nodes.len() {
        if matches!(nodes[i], Node::Op(Op::Not)) {
            let len = nodes.len();
            nodes.remove(i);
            if i + 1 < len {
                let operand = std::mem::replace(&mut nodes[i], Node::Space);
                nodes[i] = Node::Group(Group::new(Not, vec![operand]));
            }
        } else {
            i += 1;
        }
    }
    for kind in [And, Or, AndNot, AndMaybe, Require] {
        let mut i = 0;
        while i < nodes.len() {
            if !matches!(nodes[i], Node::Op(Op::Infix(k)) if k == kind) {
                i += 1;
                continue;
            }
            if i == 0 || i + 1 >= nodes.len() {
                nodes.remove(i);
                continue;
            }
            let right = nodes.remove(i + 1);
            nodes.remove(i);
            match &mut nodes[i - 1] {
                Node::Group(left) if kind.merging() && left.kind == kind => left.nodes.push(right),
                left => {
                    let left = std::mem::replace(left, Node::Space);
                    nodes[i - 1] = Node::Group(Group::new(kind, vec![left, right]));
                }
            }
        }
    }
    for node in nodes.iter_mut() {
        if let Node::Group(g) = node {
            operators(g);
        }
    }
}
