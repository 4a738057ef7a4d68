//! Property tests of the MPI wire format: every message survives encode/decode unchanged, and
//! no byte string — a cut or altered message, or noise — makes `decode` panic.

use pld_ir::{DataType, FileId, Span};
use pld_sim::cost::BusFactor;
use pld_sim::timeline::{CallInfo, CollectiveRun};
use pld_sim::ParkedCore;
use pld_sim_mpi::wire::{decode, encode, Message, Share, Table, Traffic, Written};
use proptest::collection::vec;
use proptest::prelude::*;

fn rank() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..64, Just(usize::MAX)]
}

fn traffic() -> impl Strategy<Value = Traffic> {
    let table = prop_oneof![Just(Table::Remote), Just(Table::Local), Just(Table::ReadWritten)];
    (table, rank(), ".{0,12}", any::<u64>()).prop_map(|(table, rank, op, bytes)| Traffic {
        table,
        rank,
        op,
        bytes,
    })
}

fn collective() -> impl Strategy<Value = CollectiveRun> {
    let factor = prop_oneof![
        Just(None),
        Just(Some(BusFactor::AllReduce)),
        Just(Some(BusFactor::Gather)),
        Just(Some(BusFactor::One))
    ];
    let dtype = prop_oneof![Just(None), Just(Some(DataType::FP32)), Just(Some(DataType::INT32))];
    let info = (dtype, any::<u64>(), proptest::option::of("[a-z]{1,4}"), proptest::option::of(any::<i64>()))
        .prop_map(|(dtype, count, redop, root)| CallInfo {
            dtype,
            count,
            redop,
            root,
            algorithm: root.map(|_| "ring".to_string()),
        });
    let timing = (any::<usize>(), any::<u64>(), any::<u64>(), any::<u64>());
    ("[a-z._]{1,20}", rank(), timing, factor, info).prop_map(
        |(name, rank, (seq, start, end, bytes), factor, info)| CollectiveRun {
            name,
            rank,
            seq,
            start,
            end,
            bytes,
            factor,
            info,
        },
    )
}

fn share() -> impl Strategy<Value = Share> {
    let written = ("[a-z]{1,6}", any::<usize>(), vec(any::<u8>(), 0..64))
        .prop_map(|(output, lo, bytes)| Written { output, lo, bytes });
    (
        (rank(), vec(traffic(), 0..6), any::<[u64; 3]>(), any::<u64>()),
        (vec(written, 0..4), vec(".{0,20}", 0..3), any::<u64>(), vec(collective(), 0..3)),
    )
        .prop_map(|((rank, traffic, counters, steps), (writes, warnings, modeled_ps, collectives))| {
            Share { rank, traffic, counters, steps, writes, warnings, modeled_ps, collectives }
        })
}

fn parked() -> impl Strategy<Value = ParkedCore> {
    (
        (rank(), proptest::option::of(any::<usize>()), ".{0,10}"),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        (".{0,10}", ".{0,10}", any::<i32>(), vec(rank(), 0..4)),
    )
        .prop_map(|((rank, core, kernel), (file, lo, hi), (cell, predicate, value, writers))| {
            ParkedCore {
                rank,
                core,
                kernel,
                span: Span { file: FileId(file), lo, hi },
                cell,
                predicate,
                value,
                writers,
            }
        })
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![share().prop_map(Message::Share), vec(parked(), 0..4).prop_map(Message::Parked)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_message_survives_the_wire(m in message()) {
        let b = encode(&m).expect("encode");
        prop_assert_eq!(decode(&b), Ok(m));
    }

    #[test]
    fn a_cut_message_is_an_error(m in message(), cut in any::<prop::sample::Index>()) {
        let b = encode(&m).expect("encode");
        let at = cut.index(b.len());
        prop_assert!(decode(&b[..at]).is_err(), "a message cut at {} of {} decoded", at, b.len());
    }

    #[test]
    fn altered_bytes_and_noise_never_panic(m in message(), at in any::<prop::sample::Index>(), v in any::<u8>(), noise in vec(any::<u8>(), 0..200)) {
        let mut b = encode(&m).expect("encode");
        let i = at.index(b.len());
        b[i] = v;
        // Either a message or an error: what matters is that it returns.
        let _ = decode(&b);
        let _ = decode(&noise);
    }
}
