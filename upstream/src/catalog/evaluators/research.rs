//! The catalog's rows of IdeaBench's, JRE-L's and NFCats' user simulators (research ideas,
//! science journalism, non-factoid questions).

use super::{additional, context, criterion, expertise, last_criterion, persona, task};
use crate::catalog::Entry;
use crate::catalog::Select::Assigned;
use crate::catalog::SimulatorOf::*;

/// Where each piece stands and its hash.
pub(super) static RESEARCH_ROWS: &[Entry] = &[
    // IdeaBenchEvaluator
    persona(IdeaBench, "simulator.ideabench.persona", "b7f6bf61fa8ab169"),
    expertise(
        IdeaBench,
        "simulator.ideabench.expertise",
        "9b58c37e406a0648",
    ),
    additional(
        IdeaBench,
        "simulator.ideabench.additional",
        "42cdaa040997c9d3",
    ),
    task(IdeaBench, "simulator.ideabench.task", "67e7fa4ddf87f95b"),
    criterion(
        IdeaBench,
        0,
        "simulator.ideabench.criterion.0",
        "92be3038b2de06af",
    ),
    criterion(
        IdeaBench,
        1,
        "simulator.ideabench.criterion.1",
        "b8cf09a9299064ca",
    ),
    criterion(
        IdeaBench,
        2,
        "simulator.ideabench.criterion.2",
        "72524ddbffe37686",
    ),
    criterion(
        IdeaBench,
        3,
        "simulator.ideabench.criterion.3",
        "6013e2688e65cfa3",
    ),
    criterion(
        IdeaBench,
        4,
        "simulator.ideabench.criterion.4",
        "b081f431e81c5574",
    ),
    criterion(
        IdeaBench,
        5,
        "simulator.ideabench.criterion.5",
        "8981654eb5305278",
    ),
    last_criterion(
        IdeaBench,
        6,
        "simulator.ideabench.criterion.6",
        "913426c18ee6065a",
    ),
    context(
        IdeaBench,
        0,
        "simulator.ideabench.reference",
        Assigned("evaluation_context", 0),
        "c859b923615a10aa",
    ),
    // JRELEvaluator
    persona(JreL, "simulator.jre_l.persona", "ccafecb0f2180b7c"),
    expertise(JreL, "simulator.jre_l.expertise", "2934e547823cc593"),
    additional(JreL, "simulator.jre_l.additional", "e7274450055a5fca"),
    task(JreL, "simulator.jre_l.task", "f879439179fa8ddf"),
    criterion(JreL, 0, "simulator.jre_l.criterion.0", "ce93d9ef570fa9b8"),
    criterion(JreL, 1, "simulator.jre_l.criterion.1", "51b3acba5d3e0821"),
    criterion(JreL, 2, "simulator.jre_l.criterion.2", "f2897b322a8a2b17"),
    criterion(JreL, 3, "simulator.jre_l.criterion.3", "d8641f7727651d48"),
    criterion(JreL, 4, "simulator.jre_l.criterion.4", "9673dcf0467decf9"),
    criterion(JreL, 5, "simulator.jre_l.criterion.5", "c4f29bfa3bb5d309"),
    criterion(JreL, 6, "simulator.jre_l.criterion.6", "13066b12856200f4"),
    last_criterion(JreL, 7, "simulator.jre_l.criterion.7", "e8d5685007476e8e"),
    context(
        JreL,
        0,
        "simulator.jre_l.reference",
        Assigned("evaluation_context", 0),
        "9710f7b755ffff05",
    ),
    // NFCatsEvaluator
    persona(NfCats, "simulator.nfcats.persona", "9dd08d272ccdc9f6"),
    expertise(NfCats, "simulator.nfcats.expertise", "355962d186d5c047"),
    additional(NfCats, "simulator.nfcats.additional", "c8affda72888b9a6"),
    task(NfCats, "simulator.nfcats.task", "6bd0c73bfaf6daa0"),
    criterion(
        NfCats,
        0,
        "simulator.nfcats.criterion.0",
        "815b0ed14a375152",
    ),
    criterion(
        NfCats,
        1,
        "simulator.nfcats.criterion.1",
        "15a3b3e7718b1e8a",
    ),
    criterion(
        NfCats,
        2,
        "simulator.nfcats.criterion.2",
        "94d4ef8267db223e",
    ),
    criterion(
        NfCats,
        3,
        "simulator.nfcats.criterion.3",
        "225680b48cf4ab7e",
    ),
    criterion(
        NfCats,
        4,
        "simulator.nfcats.criterion.4",
        "83bdb4b3027ab167",
    ),
    criterion(
        NfCats,
        5,
        "simulator.nfcats.criterion.5",
        "57e1a8bfb947fc00",
    ),
    last_criterion(
        NfCats,
        6,
        "simulator.nfcats.criterion.6",
        "7ca56c95175384bc",
    ),
    context(
        NfCats,
        0,
        "simulator.nfcats.note",
        Assigned("evaluation_context", 0),
        "0025aa34f88bcc81",
    ),
];
