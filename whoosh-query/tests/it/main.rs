//! Integration tests of `mb-whoosh-query`, one binary: parity with Whoosh 2.7.4's parser.

mod whoosh_syntax;
