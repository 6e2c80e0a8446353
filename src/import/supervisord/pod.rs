//! The processes of the file as the pod: supervisord's start order, the
//! roles (a program restarted after every exit is a sidecar, or the ones
//! --main names are mains), each main's restart policy and rules from
//! `autorestart` and `exitcodes`, and one termination grace period from the
//! groups' `stopwaitsecs` (docs/import.md, "supervisord"). It writes the
//! draft from what `program` read: it reads no file and starts nothing.

use super::{Globals, Proc, Reader, Restart};
use crate::import::draft::{Draft, Process, Table, Value};
use crate::import::{Ctx, NoteKind};

impl Reader {
    pub(super) fn draft(&self, ctx: &mut Ctx, globals: &Globals, mut procs: Vec<Proc>) -> Draft {
        let mut d = Draft::default();
        d.comment
            .push(format!("Imported from the supervisord configuration {} by `podinit import`.", ctx.file));
        d.comment.push(
            "Programs are in supervisord's start order (priority, lowest first). Sidecars start one".into(),
        );
        d.comment.push(
            "after another, then the mains; on SIGTERM the mains stop first, then the sidecars in".into(),
        );
        d.comment
            .push("reverse order, as supervisord stops the highest priority first (docs/import.md).".into());
        // Roles.
        if ctx.opts.mains.is_empty() {
            // A program supervisord restarts after every exit is a sidecar;
            // the others are mains with their own restart policy. The last
            // one restarted after every exit is a main too, so that the pod
            // runs until it is stopped, as supervisord does.
            let last_always = procs.iter().rposition(|p| p.restart == Restart::Always);
            for (i, p) in procs.iter_mut().enumerate() {
                p.main = p.restart != Restart::Always || Some(i) == last_always;
            }
        } else {
            for m in &ctx.opts.mains {
                let mut any = false;
                for p in procs.iter_mut().filter(|p| &p.name == m || &p.raw_name == m || &p.program == m) {
                    p.main = true;
                    any = true;
                }
                if !any {
                    ctx.error(None, format!("--main {m}: no program of this file has that name"));
                }
            }
        }
        // Termination: supervisord stops one group after another, each
        // given up to its stopwaitsecs; its worst case is their sum.
        let mut per_group: Vec<(usize, i64)> = Vec::new();
        for p in &procs {
            match per_group.iter_mut().find(|(g, _)| *g == p.group_seq) {
                Some((_, w)) => *w = (*w).max(p.stopwait),
                None => per_group.push((p.group_seq, p.stopwait)),
            }
        }
        let grace: i64 = per_group.iter().map(|(_, w)| *w).sum();
        d.pod
            .set("termination_grace_period", Value::Str(format!("{grace}s")), None)
            .note("supervisord stops one group after another, each up to its stopwaitsecs (10 s when")
            .note("not written); this is their sum, as one budget for the whole stop.");
        if let Some(names) = &globals.not_started {
            d.comment.push(String::new());
            d.comment.push(format!(
                "Not imported (autostart=false, started only by `supervisorctl start`): {names}."
            ));
        }
        for p in procs {
            let role = if p.main { "main" } else { "sidecar" };
            let mut proc = Process::new(&p.name, role, p.from.as_ref());
            proc.comment.push(format!(
                "[{}]{}: priority {}, autorestart={}",
                p.section,
                if p.num_of > 1 { format!(" process {}", p.num) } else { String::new() },
                p.priority,
                p.restart.word()
            ));
            proc.table.set("command", p.command, p.command_from.as_ref());
            if !p.env.is_empty() {
                proc.table.set("env", Value::Table(p.env), None);
            }
            if let Some((dir, from)) = p.dir {
                proc.table.set("working_dir", dir, from.as_ref());
            }
            if let Some((user, from)) = p.user {
                proc.table.set("user", user, from.as_ref());
            }
            if let Some((sig, from)) = p.stop_signal {
                proc.table.set("stop_signal", sig, from.as_ref());
            }
            if p.main {
                let from = p.restart_from.as_ref();
                match &p.restart {
                    Restart::Always => {
                        proc.table.set("restart_policy", "Always", from);
                    }
                    Restart::Never => {
                        proc.table.set("restart_policy", "Never", from);
                    }
                    Restart::Unexpected(codes) if codes.as_slice() == [0] => {
                        proc.table.set("restart_policy", "OnFailure", from);
                    }
                    Restart::Unexpected(codes) => {
                        proc.table.set("restart_policy", "Never", from);
                        let mut exit = Table::default();
                        exit.set("operator", "not_in", None);
                        exit.set("values", Value::List(codes.iter().map(|c| Value::Int(*c)).collect()), None);
                        let mut rule = Table::default();
                        rule.set("action", "restart", None);
                        rule.set("exit_codes", exit, None);
                        proc.table
                            .set(
                                "restart_rules",
                                Value::List(vec![Value::Table(rule)]),
                                p.exitcodes_from.as_ref(),
                            )
                            .note("autorestart=unexpected: restarted unless it exits with one of exitcodes");
                    }
                }
            } else if p.restart != Restart::Always {
                let at = p.restart_from.clone().or(p.from.clone());
                self.note(
                    ctx,
                    p.file,
                    at.as_ref(),
                    NoteKind::Approximated,
                    format!(
                        "{} is a sidecar (not named by --main): podinit restarts it after every exit, where supervisord's autorestart={} would not",
                        p.name,
                        p.restart.word()
                    ),
                );
            }
            d.processes.push(proc);
        }
        d
    }
}
