//! Whose memory a call is about: a tenant's user, and optionally an agent whose memory of the
//! user is kept apart. Its own module, so that the schedule and the service both name it.

use crate::tenant::Tenant;

/// Whose memory a call is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    /// The tenant the call is for.
    pub tenant: Tenant,
    /// The user.
    pub user_id: String,
    /// The agent, when its memory is kept apart from the user's.
    pub agent_id: Option<String>,
}
