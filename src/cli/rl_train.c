/* `syncwise rl train`: pre-training on copies of the classic policies, then double DQN over
 * random instances (the RLP paper's Algorithm 2), saving the policy as it goes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "rl_opts.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

#define CMD "rl train"
#define FIRST_TRAIN_INSTANCE 1000000 /* training instances never repeat pre-training ones */

typedef struct plan {
    sw_cli_rl_opts rl;
    sw_rl_hparams hp;
    const char *out, *pre_policies;
    long pre_instances, episodes, save_every;
    uint32_t pre_epochs;
    double epochs_t0, epochs_said; /* when the passes began, and last said how far they were */
    int layout; /* in layouts[]: sw_rl_layout - 1 */
    bool resume;
    int n_pre_policies;
    long pre_done, episodes_done; /* runs of each phase done (before this command: --resume) */
    char note[1024];
    int argc;
    char **argv;    /* this command's, for --resume to compare with the note's */
    char saved[64]; /* what the policy file holds: "pre-training run 50", "episode 25", or "" */
    int out_lock;   /* --out's lock, held from the start to the end (sw_file_claim) */
    const sw_stop_flag *stop; /* a signal: save after the run under way, and end */
} plan;

static const char *const layouts[] = {"paper", "momentum", "waiting", "stretch", NULL};

#define AT(field) offsetof(plan, field)
static const sw_opt own[] = {
    {SW_OPT_ROW(SW_OPT_STR, "out", 0, AT(out), 0, 0, "FILE",
                "policy file to write (one that is not empty is refused\nwithout --resume)")},
    {SW_OPT_ROW(SW_OPT_LONG, "pre-instances", 0, AT(pre_instances), 0, 1000000, "N",
                "pre-training instances (0 skips pre-training)")},
    {SW_OPT_ROW(SW_OPT_STR, "pre-policies", 0, AT(pre_policies), 0, 0, "LIST",
                "classic policies copied on each: bsp, asp or ssp:s=S\n"
                "(the paper's SSP s=2,5,8 are ssp:s=1,4,7); with\n"
                "--features stretch only its actions, by default\n"
                "bsp,asp,ssp:s=4")},
    {SW_OPT_ROW(SW_OPT_U32, "pre-epochs", 0, AT(pre_epochs), 0, 100000, "N",
                "passes over all pre-training's records, shuffled,\n"
                "after its last run (0: none; each run regresses\n"
                "once on its own as it comes, as the paper)")},
    {SW_OPT_ROW(SW_OPT_LONG, "episodes", 0, AT(episodes), 0, 10000000, "N", "DQN episodes")},
    {SW_OPT_ROW(SW_OPT_LONG, "save-every", 0, AT(save_every), 1, 10000000, "N",
                "pre-training runs or episodes between saves")},
    {SW_OPT_ROW(SW_OPT_FLAG, "resume", 0, AT(resume), 0, 0, NULL,
                "go on from where the training that wrote --out\nstopped (its last save), "
                "given that command's\noptions again")},
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(rl.quiet), 0, 0, NULL, "no progress lines")},
    SW_OPT_HEADING("learning (defaults from the paper)"),
    {SW_OPT_ROW(SW_OPT_U32, "history", 0, AT(hp.history), 1, SW_RL_MAX_HISTORY, "H",
                "pushes (stretches) of history in the state")},
    {SW_OPT_ROW(SW_OPT_CHOICE, "features", 0, AT(layout), 0, 0, "F",
                "paper: the paper's four per push; momentum: and\nthe optimizer's momentum; "
                "waiting: and the share of\nworkers waiting and the pusher's lead over the\n"
                "slowest clock; stretch: another action space,\n"
                "for rlswitch, picking bsp, ssp:s=4 or asp every\n"
                "10 steps per worker (the last three not the paper's)"),
     .choices = layouts},
    {SW_OPT_ROW(SW_OPT_U32, "replay", 0, AT(hp.replay), 1, 1 << 24, "N", "replay pool")},
    {SW_OPT_ROW(SW_OPT_U32, "minibatch", 0, AT(hp.minibatch), 1, 4096, "B", "learning minibatch")},
    {SW_OPT_ROW(SW_OPT_U32, "copy-every", 0, AT(hp.copy_every), 1, 1 << 30, "C",
                "iterations between copies to the target network")},
    {SW_OPT_ROW(SW_OPT_F32, "gamma", 0, AT(hp.gamma), 0, 1, "G", "discount")},
    {SW_OPT_ROW(SW_OPT_F32, "epsilon", 0, AT(hp.epsilon), 0, 1, "E", "exploration")},
    {SW_OPT_ROW(SW_OPT_F32, "rl-lr", 0, AT(hp.lr), 1e-9, 9.99, "X",
                "learning rate of the Q-network")},
    {SW_OPT_ROW(SW_OPT_TEXT, "qnet", 0, AT(hp.qnet), 0, SW_MODEL_SPEC_LEN, "SPEC", "Q-network")},
    {SW_OPT_ROW(SW_OPT_U32, "learn-steps", 0, AT(hp.learn_steps), 1, 100000, "N",
                "learning steps per decision (1, as the paper;\n"
                "a stretch is a hundred pushes' decision)")},
    {SW_OPT_ROW(SW_OPT_F32, "grad-clip", 0, AT(hp.grad_clip), 0, 1e9, "N",
                "scale a learning step's gradient down to this norm\n"
                "(0: never, as the paper)")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .about = "Learns a synchronization policy by deep Q-learning on simulated instances: first\n"
             "regresses Q(S, a) on the discounted return that followed in runs copying classic\n"
             "policies (pre-training), then runs double DQN episodes, each training one model\n"
             "to the target accuracy. Writes the policy file (atomically) every --save-every\n"
             "runs of either phase and at its end, for `--policy rlp:file=FILE` (with --features\n"
             "stretch, `--policy rlswitch:file=FILE`); --resume goes on from the last save of a\n"
             "training that stopped.",
    .tables = {own, sw_cli_rl_opts_table, sw_cli_rl_reward_table},
};

static const char default_pre[] = "bsp,asp,ssp:s=1,ssp:s=4,ssp:s=7";

/* Pre-training copies classic policies only: each of the list is checked before any run. In
 * the stretch layout each is one of its actions, and so is the default. */
static int check_pre_policies(plan *p)
{
    bool stretch = p->hp.layout == SW_RL_LAYOUT_STRETCH;
    if (stretch && p->pre_policies == default_pre)
        p->pre_policies = "bsp,asp,ssp:s=4";
    char *names[32], err[SW_ERR_LEN];
    int n = sw_cli_policy_list(CMD, "--pre-policies", p->pre_policies, names, 32), rc = 0;
    if (n < 0)
        return 2;
    for (int k = 0; k < n; k++) {
        if (!rc && sw_rl_check_classic(names[k], err))
            rc = sw_cli_error(CMD, "--pre-policies: %s", err) + 1;
        else if (!rc && stretch && sw_rl_stretch_action(names[k]) < 0)
            rc = sw_cli_error(CMD,
                              "--pre-policies: with --features stretch each is one of its "
                              "actions, bsp, ssp:s=4 or asp, not '%s'",
                              names[k]) +
                 1;
        free(names[k]);
    }
    p->n_pre_policies = n;
    return rc;
}

static int parse(int argc, char **argv, plan *p)
{
    int rc = sw_cli_parse(&command, argc, argv, p, NULL);
    if (rc)
        return rc == 1 ? -1 : rc;
    p->hp.layout = (uint32_t)p->layout + SW_RL_LAYOUT_PAPER;
    char err[SW_ERR_LEN];
    if (sw_rl_check_hparams(&p->hp, err))
        return sw_cli_error(CMD, "%s", err) + 1;
    sw_rl_agent *a; /* a Q-network that cannot be built is said before the data is read */
    if (sw_rl_agent_new(&a, &p->hp, NULL, 0, p->rl.seed, err))
        return sw_cli_error(CMD, "--qnet: %s", err) + 1;
    /* as the network spells itself, which is how a policy file records it (--resume compares) */
    snprintf(p->hp.qnet, sizeof p->hp.qnet, "%s", sw_rl_agent_hparams(a)->qnet);
    sw_rl_agent_free(a);
    if ((rc = check_pre_policies(p)))
        return rc;
    if (p->rl.sc.switch_cost > 0 && p->hp.layout != SW_RL_LAYOUT_STRETCH)
        return sw_cli_error(CMD, "--switch-cost costs a change of a stretch's policy: it needs "
                                 "--features stretch") + 1;
    if (p->pre_instances == 0 && p->episodes == 0)
        return sw_cli_error(CMD, "--pre-instances 0 and --episodes 0 leave nothing to learn") + 1;
    if (p->pre_instances == 0 && p->pre_epochs > 0)
        return sw_cli_error(CMD, "--pre-epochs passes over pre-training's records: with "
                                 "--pre-instances 0 there are none") +
               1;
    /* The command line, kept in the policy file so that it can be made again. */
    sw_cli_cmdline_write(p->note, sizeof p->note, "syncwise rl train", argc, argv);
    p->argc = argc;
    p->argv = argv;
    /* A policy file that cannot be written is said now, not after minutes of pre-training. */
    const char *inputs[] = {p->rl.data_spec, p->pre_policies, p->rl.sc.cluster};
    if ((rc = sw_cli_outputs_apart(CMD, 1, (const char *[]){"--out"}, &p->out, 3, inputs)))
        return rc;
    if (sw_file_check_writable(p->out, "--out", err)) /* claimed once the scenario holds */
        return sw_cli_error(CMD, "%s", err) + 1;
    return 0;
}

/* A learning loss that is no longer finite means the Q-network diverged: training stops, and
 * the policy file keeps what it held (a diverged network is never saved). */
static int diverged(const plan *p, const char *when, double loss)
{
    if (isfinite(loss))
        return 0;
    char kept[128] = "was not written";
    if (p->saved[0])
        snprintf(kept, sizeof kept, "keeps the policy of %s", p->saved);
    return sw_cli_error(CMD,
                        "the Q-network diverged (its learning loss is %s) in %s; %s %s; try "
                        "--grad-clip 10 or a smaller --rl-lr",
                        isnan(loss) ? "NaN" : "infinite", when, p->out, kept);
}

static int save(plan *p, const sw_rl_agent *a, const char *what)
{
    sw_rl_policy pol = {.hp = *sw_rl_agent_hparams(a),
                        .weights = (float *)sw_rl_agent_weights(a),
                        .n_weights = sw_rl_agent_n_params(a),
                        .pre_runs = (uint64_t)p->pre_done,
                        .episodes = (uint64_t)p->episodes_done};
    snprintf(pol.note, sizeof pol.note, "%s", p->note);
    char err[SW_ERR_LEN];
    if (sw_rl_policy_save(p->out, &pol, err))
        return sw_cli_error(CMD, "%s", err);
    snprintf(p->saved, sizeof p->saved, "%s", what);
    return 0;
}

/* After the phase's run `done` of `total`, `at` ("episode 25"): the file is written every
 * --save-every runs, at the phase's end, and when a signal asked to stop (then 1, said: the
 * training is not over, and --resume goes on from here). */
static int save_due(plan *p, const sw_rl_agent *a, long done, long total, const char *at)
{
    bool stopped = sw_stop_requested(p->stop);
    int rc = done % p->save_every == 0 || done == total || stopped ? save(p, a, at) : 0;
    if (!rc && stopped)
        rc = sw_cli_error(CMD, "stopped by a signal after %s, saved to %s: the same command with "
                               "--resume goes on from there", at, p->out);
    return rc;
}

static int new_agent(const plan *p, sw_rl_agent **a)
{
    char err[SW_ERR_LEN];
    return sw_rl_agent_new(a, &p->hp, NULL, 0, p->rl.seed, err) ? sw_cli_error(CMD, "%s", err) : 0;
}

/* The learning option of the command that differs from what the policy file records, or NULL:
 * a training goes on only as it began. */
static const char *other_option(const sw_rl_hparams *file, const sw_rl_hparams *cmd)
{
    return file->layout != cmd->layout           ? "--features"
           : file->history != cmd->history       ? "--history"
           : file->replay != cmd->replay         ? "--replay"
           : file->minibatch != cmd->minibatch   ? "--minibatch"
           : file->copy_every != cmd->copy_every ? "--copy-every"
           : file->gamma != cmd->gamma           ? "--gamma"
           : file->epsilon != cmd->epsilon       ? "--epsilon"
           : file->lr != cmd->lr                 ? "--rl-lr"
           : strcmp(file->qnet, cmd->qnet)       ? "--qnet"
                                                 : NULL;
}

/* What a resume may change: how many runs, where the file goes, what it prints. */
static const char *const may_change[] = {"out",    "pre-instances", "episodes", "save-every",
                                         "resume", "quiet",         "threads",  NULL};

/* Whether this command sets the options that shaped the training (the instances, the layout,
 * the seed: all but may_change) as the command in the file's note did; both are printed when
 * not. A note cut at its length cannot tell, and is passed over with a warning. */
static int same_training(const plan *p, const char *note)
{
    char words[sizeof p->note], *argv[sizeof p->note / 2 + 2];
    int argc = strlen(note) < sizeof p->note - 1
                   ? sw_cli_cmdline_read(note, "syncwise rl train", CMD, words, argv,
                                         (int)(sizeof argv / sizeof *argv))
                   : -1;
    if (argc < 0) {
        sw_log(SW_LOG_WARN,
               "--resume: %s's note does not hold its whole command: the options "
               "that shaped it cannot be compared with these",
               p->out);
        return 0;
    }
    char was[4096], now[4096], heading[4200];
    if (sw_cli_options_given(&command, argc, argv, NULL, may_change, was, sizeof was) ||
        sw_cli_options_given(&command, p->argc, p->argv, NULL, may_change, now, sizeof now) ||
        !strcmp(was, now))
        return 0;
    snprintf(heading, sizeof heading, "the training in %s was begun with", p->out);
    sw_cli_print_both(CMD, heading, was, strlen(was), "and this command gives", now);
    return sw_cli_error(CMD,
                        "--resume: %s was begun with other options (above): give those of "
                        "the command that began it (only --out, --pre-instances, --episodes, "
                        "--save-every, --threads and -q may change)",
                        p->out) +
           1;
}

/* --resume: the network of --out's last save, and how far its training had come. What a save
 * does not keep starts anew: the replay pool (empty) and the exploration's draws. */
static int resume(plan *p, sw_rl_agent **a)
{
    sw_rl_policy pol;
    char err[SW_ERR_LEN];
    if (sw_rl_policy_load(p->out, &pol, err))
        return sw_cli_error(CMD, "--resume: %s%s", err,
                            access(p->out, F_OK) ? " (nothing was saved to go on from: start "
                                                   "without --resume)" : "");
    const char *other = other_option(&pol.hp, &p->hp);
    int rc = 0;
    if (!pol.has_progress)
        rc = sw_cli_error(CMD,
                          "--resume: %s does not say how far its training came (a file "
                          "written before --resume existed)",
                          p->out);
    else if (other)
        rc = sw_cli_error(CMD,
                          "--resume: %s was trained with another %s than this command's: "
                          "give the options of the command that began it",
                          p->out, other) +
             1;
    else
        rc = same_training(p, pol.note);
    if (!rc && pol.episodes > 0 && pol.pre_runs < (uint64_t)(p->pre_instances * p->n_pre_policies))
        rc = sw_cli_error(CMD,
                          "--resume: %s has %llu episodes done after %llu pre-training runs: "
                          "pre-training comes first, so --pre-instances cannot grow now "
                          "(give %llu)",
                          p->out, (unsigned long long)pol.episodes,
                          (unsigned long long)pol.pre_runs,
                          (unsigned long long)(pol.pre_runs / (uint64_t)p->n_pre_policies)) +
             1;
    if (!rc && (pol.pre_runs > (uint64_t)(p->pre_instances * p->n_pre_policies) ||
                pol.episodes > (uint64_t)p->episodes))
        rc = sw_cli_error(CMD,
                          "--resume: %s has %llu pre-training runs and %llu episodes done, "
                          "more than --pre-instances and --episodes ask",
                          p->out, (unsigned long long)pol.pre_runs,
                          (unsigned long long)pol.episodes) +
             1;
    if (!rc && sw_rl_agent_new(a, &p->hp, pol.weights, pol.n_weights, p->rl.seed, err))
        rc = sw_cli_error(CMD, "--resume: %s", err);
    if (!rc) {
        p->pre_done = (long)pol.pre_runs;
        p->episodes_done = (long)pol.episodes;
        snprintf(p->saved, sizeof p->saved, "its last save");
        printf("resuming %s after %ld pre-training runs and %ld episodes\n", p->out, p->pre_done,
               p->episodes_done);
    }
    sw_rl_policy_free(&pol);
    return rc;
}

/* A line of progress: `done` of the phase's `total` runs, and the time left in all, the runs
 * of the phases still to come (`later`) counted at the pace of this command's runs since
 * `first` (a pre-training run and an episode each simulate one instance). */
static void progress(const plan *p, const char *phase, long done, long total, long first,
                     long later, double t0, const char *detail)
{
    if (p->rl.quiet)
        return;
    double spent = sw_clock_now_s() - t0,
           left =
               done > first ? spent / (double)(done - first) * (double)(total - done + later) : 0;
    char a[32], b[32];
    sw_cli_rl_duration(a, sizeof a, spent);
    sw_cli_rl_duration(b, sizeof b, left);
    bool tty = isatty(STDERR_FILENO);
    fprintf(stderr,
            tty ? "\r\033[K%s %ld/%ld, %s, about %s left in all; %s"
                : "%s %ld/%ld, %s, about %s left in all; %s\n",
            phase, done, total, a, b, detail);
    if (tty && done == total)
        fputc('\n', stderr);
}

/* Pre-training's runs, numbered as they come: run r copies policy r % n on instance r / n. */
typedef struct pre_list {
    char *names[32];
    int n;
} pre_list;

static int pre_run(plan *p, const pre_list *l, long r, sw_rl_mode mode, sw_rl_agent *a,
                   sw_rl_archive *archive, sw_rl_run *run)
{
    char err[SW_ERR_LEN];
    const char *policy = l->names[r % l->n];
    if (sw_rl_run_instance(&p->rl.sc, p->rl.seed, (uint64_t)(r / l->n), 0, policy, mode, a, archive,
                           0, run, err))
        return sw_cli_error(CMD, "pre-training %s on instance %ld: %s", policy, r / l->n, err);
    return 0;
}

/* Every instance under every listed classic policy, from run p->pre_done on, keeping the
 * records in `archive` when passes over them follow (then the phase's end is theirs to save: a
 * file that says pre-training is done holds them). */
static int pretrain_runs(plan *p, const pre_list *l, sw_rl_agent *a, sw_rl_archive *archive)
{
    double t0 = sw_clock_now_s(), loss = 0;
    int rc = 0;
    long total = p->pre_instances * l->n, first = p->pre_done;
    char detail[512], at[64];
    for (long done = first; done < total && !rc; done++) {
        sw_rl_run run;
        if ((rc = pre_run(p, l, done, SW_RL_EMULATE, a, archive, &run)))
            break;
        snprintf(at, sizeof at, "pre-training run %ld", done + 1);
        if ((rc = diverged(p, at, run.td_loss)))
            break;
        loss = done > first ? 0.95 * loss + 0.05 * run.td_loss : run.td_loss;
        snprintf(detail, sizeof detail, "%s on %s: %.0f s to target, regression loss %.3g",
                 l->names[done % l->n], run.regime[0] ? run.regime : run.model, run.time, loss);
        progress(p, "pre-training", done + 1, total, first, p->episodes - p->episodes_done, t0,
                 detail); /* the passes are quick beside the runs */
        p->pre_done = done + 1;
        if (!archive || done + 1 < total)
            rc = save_due(p, a, done + 1, total, at);
    }
    return rc;
}

/* A resumed training's archive: the records of the pre-training runs done before it, gathered
 * again (the runs are the same, and only recorded). */
static int gather_again(plan *p, const pre_list *l, sw_rl_agent *a, sw_rl_archive *archive)
{
    double t0 = sw_clock_now_s();
    long later = p->pre_instances * l->n - p->pre_done + p->episodes - p->episodes_done;
    char detail[64];
    for (long done = 0; done < p->pre_done; done++) {
        sw_rl_run run;
        int rc = pre_run(p, l, done, SW_RL_RECORD, a, archive, &run);
        if (rc)
            return rc;
        snprintf(detail, sizeof detail, "%zu records", sw_rl_archive_size(archive));
        progress(p, "gathering pre-training's records again", done + 1, p->pre_done, 0, later, t0,
                 detail);
    }
    return 0;
}

static int epoch_done(void *ctx, uint32_t epoch, uint32_t epochs, double loss)
{
    plan *p = ctx;
    char at[64], detail[64];
    snprintf(at, sizeof at, "pass %u over pre-training's records", epoch);
    snprintf(detail, sizeof detail, "regression loss %.3g", loss);
    double now = sw_clock_now_s(); /* thousands of quick passes: a line a second at most */
    if (epoch == 1 || epoch == epochs || now - p->epochs_said >= 1) {
        progress(p, "pass over pre-training's records", epoch, epochs, 0, 0, p->epochs_t0, detail);
        p->epochs_said = now;
    }
    return diverged(p, at, loss);
}

/* Pre-training's runs, then --pre-epochs passes over all their records. */
static int pretrain(plan *p, sw_rl_agent *a)
{
    pre_list l;
    if ((l.n = sw_cli_policy_list(CMD, "--pre-policies", p->pre_policies, l.names, 32)) < 0)
        return 2;
    sw_rl_archive *archive = NULL;
    char err[SW_ERR_LEN];
    int rc = p->pre_epochs > 0 && sw_rl_archive_new(&archive, sw_rl_agent_dim(a), err)
                 ? sw_cli_error(CMD, "%s", err)
                 : 0;
    if (!rc && archive && p->pre_done > 0)
        rc = gather_again(p, &l, a, archive);
    if (!rc)
        rc = pretrain_runs(p, &l, a, archive);
    if (!rc && archive) {
        p->epochs_t0 = sw_clock_now_s();
        rc = sw_rl_archive_refit(archive, a, p->pre_epochs, p->rl.seed, epoch_done, p);
        if (rc == SW_ENOMEM)
            rc = sw_cli_error(CMD, "out of memory for a pass over pre-training's records");
        if (!rc)
            rc = save(p, a, "pre-training's passes");
    }
    sw_rl_archive_free(archive);
    for (int k = 0; k < l.n; k++)
        free(l.names[k]);
    return rc;
}

static int train_episodes(plan *p, sw_rl_agent *a)
{
    /* Recent averages: each episode weighs 0.95 of the one after it, the sums divided by the
     * weights' (started at the first episode's value, they long stayed mostly its). */
    double t0 = sw_clock_now_s(), time_sum = 0, loss_sum = 0, weights = 0;
    char err[SW_ERR_LEN], detail[512], at[64];
    for (long e = p->episodes_done, first = e; e < p->episodes; e++) {
        sw_rl_run run;
        if (sw_rl_run_instance(&p->rl.sc, p->rl.seed, FIRST_TRAIN_INSTANCE + (uint64_t)e, 0,
                               "actions", SW_RL_LEARN, a, NULL, p->hp.epsilon, &run, err))
            return sw_cli_error(CMD, "episode %ld: %s", e + 1, err);
        snprintf(at, sizeof at, "episode %ld", e + 1);
        if (diverged(p, at, run.td_loss))
            return 1;
        time_sum = 0.95 * time_sum + run.time;
        loss_sum = 0.95 * loss_sum + run.td_loss;
        weights = 0.95 * weights + 1;
        snprintf(detail, sizeof detail, "%s: %.0f s%s (recent average %.0f s), TD loss %.3g",
                 run.regime[0] ? run.regime : run.model, run.time,
                 run.reached ? "" : " (target not reached)", time_sum / weights,
                 loss_sum / weights);
        progress(p, "episode", e + 1, p->episodes, first, 0, t0, detail);
        p->episodes_done = e + 1;
        if (save_due(p, a, e + 1, p->episodes, at))
            return 1;
    }
    return 0;
}

int sw_cli_rl_train(int argc, char **argv)
{
    plan p = {.hp = sw_rl_default_hparams(),
              .out = "rlp.swrl",
              .pre_policies = default_pre,
              .pre_instances = 100,
              .episodes = 1000,
              .save_every = 25,
              .out_lock = -1};
    sw_cli_rl_defaults(&p.rl);
    int rc = parse(argc, argv, &p);
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((rc = sw_cli_rl_load(&p.rl, CMD)))
        return rc;
    /* Claimed, not only checked: two trainings saving one file in turns would each overwrite
     * the other's weights and progress, and a resume would go on from either. Claimed after
     * the scenario is read, so that a refused command line leaves no FILE.lock behind. */
    char err[SW_ERR_LEN];
    /* A claim of ours that saved nothing (a mistyped --resume) leaves no FILE.lock behind. */
    bool made;
    if (sw_file_claim_output(p.out, "--out", &p.out_lock, &made, err)) {
        sw_data_free(&p.rl.data);
        return sw_cli_error(CMD, "%s", err);
    }
    /* As a server's checkpoint: a trained network is not lost to a forgotten --resume. */
    if (!p.resume && sw_file_refuse_fresh_start(p.out, false, "an earlier training's policy",
                                                "training", err)) {
        sw_data_free(&p.rl.data);
        sw_file_release_claim(p.out, p.out_lock, made);
        return sw_cli_error(CMD, "%s", err);
    }
    sw_rl_agent *a = NULL;
    double t0 = sw_clock_now_s();
    p.stop = sw_cli_catch_signals(); /* a second signal ends it at once, as without this */
    rc = p.resume ? resume(&p, &a) : new_agent(&p, &a);
    long pre_total = p.pre_instances * p.n_pre_policies;
    long pre_before = p.pre_done, episodes_before = p.episodes_done; /* --resume: done before */
    bool complete = p.resume && p.pre_done == pre_total && p.episodes_done == p.episodes;
    if (!rc && p.pre_done < pre_total)
        rc = pretrain(&p, a);
    double pre_s = sw_clock_now_s() - t0;
    if (!rc)
        rc = train_episodes(&p, a);
    if (!rc && complete)
        printf("%s holds the whole training already: nothing left to do\n", p.out);
    else if (!rc)
        printf("wrote %s: %ld pre-training runs%s %.0f s, %ld episodes %.0f s, %.0f s in all%s\n",
               p.out, pre_total - pre_before,
               p.pre_epochs && pre_before < pre_total ? " and their passes" : "", pre_s,
               p.episodes - episodes_before, sw_clock_now_s() - t0 - pre_s, sw_clock_now_s() - t0,
               p.resume ? " (this time: the file holds the runs before too)" : "");
    sw_rl_agent_free(a);
    sw_data_free(&p.rl.data);
    sw_file_release_claim(p.out, p.out_lock, made);
    return rc;
}
