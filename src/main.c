/* main.c — `glue <command> ...`: the dispatch table, help, and "did you mean".
 * Each command lives in src/cli/cmd_<name>.c. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/common.h"
#include "core/dist.h"
#include "core/editdist.h"
#include "core/kernels.h"
#include "core/sgemm.h"
#include "core/provenance.h"
#include "models/model.h"
#include "models/run_config.h"
#include "models/seq2seq/seq2seq.h"
#include "train/translate.h"
#include "pretrain/pretrain_config.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    CommandFn fn;
    const char *usage;    /* arguments, shown as "glue <name> <usage>" */
    const char *summary;  /* one line */
    const char *details;  /* the full --help text after the usage line */
} Command;

static const Command COMMANDS[] = {
    {"tasks", cmd_tasks, "[TASK...] [--data DIR] [--json]",
     "list the tasks (GLUE, its subsets, GoEmotions), their metrics and the rows found per split",
     "  Reads data/glue (or $GLUE_DATA, or --data DIR) and prints one row per task\n"
     "  (every task, or the TASKs named): type, metrics, rows per split or 'missing'.\n"},
    {"data", cmd_data, "fetch [TASK|all|glue|subsets|mt|pretrain] [--mirror DIR] [--dest DIR] [--json]",
     "fetch and check datasets (GLUE, GoEmotions, Multi30k, pretraining text)",
     "  With --mirror DIR (or $GLUE_MIRROR) copies from a folder laid out like\n"
     "  ../shared/data (gzipped files allowed); otherwise downloads the official\n"
     "  archives with curl. Checks every file's row count against the official size,\n"
     "  reports what is missing, and does nothing when everything is there.\n"},
    {"tokenize", cmd_tokenize, "[--vocab FILE] [--pair] [--max-len N] [--json] [TEXT...]",
     "BERT WordPiece tokenization (stdin: one text, or a<TAB>b with --pair, per line)",
     "  Prints tokens TAB ids. --json prints one object a line with the fields of\n"
     "  ../shared/tests/wordpiece_golden.jsonl.gz. Invalid UTF-8 bytes become U+FFFD,\n"
     "  which BERT's cleaning then drops. With --pair (TEXT arguments two by two) or\n"
     "  --max-len N: the model input [CLS] a [SEP] (b [SEP]) truncated longest-first\n"
     "  to N (default 128 for pairs), plus segment ids. Vocabulary: --vocab, else\n"
     "  $GLUE_VOCAB, else models/vocab.txt, else ../shared/models/vocab/bert-base-uncased-vocab.txt.\n"},
    {"vocab", cmd_vocab, "train --corpus FILE... --size N --out FILE [--overwrite] [--min-count N] [--cased] [--mark-joins] [--json]",
     "train a WordPiece vocabulary on text files (.gz allowed)",
     "  Counts the BERT (uncased) words of every line, then merges the most frequent\n"
     "  adjacent pieces (WordPiece/BPE with '##' continuations) until N tokens; a merge\n"
     "  needs at least --min-count occurrences (default 2). [PAD] [UNK] [CLS] [SEP]\n"
     "  [MASK] come first, then every character seen, so no training word is [UNK].\n"
     "  --cased keeps case and accents; --mark-joins counts a word that follows the\n"
     "  previous one without a space as a '##' continuation (\"dog.\" -> dog ##.), for\n"
     "  the exactly reversible translation tokenizer (glue translate).\n"},
    {"vectors", cmd_vectors, "train|eval ... (glue vectors train --corpus FILE... --out FILE.vec [--overwrite] [--method skipgram|cbow|glove] [--threads N] [--json]; "
     "glue vectors eval FILE.vec [--analogies FILE] [--words w1,w2,...] [--k 5] [--json])",
     "train word vectors (fastText skip-gram or CBOW, GloVe) on text files (.gz allowed), or check a .vec file",
     "  train: fastText's skip-gram or CBOW with negative sampling and character\n"
     "  n-grams (Bojanowski et al. 2017), or GloVe (Pennington et al. 2014: counts in\n"
     "  a window weighted 1/distance, weighted least squares, AdaGrad, W + W~), over\n"
     "  the BERT basic tokenizer's lower-cased words, so the vectors match TextCNN's\n"
     "  and the BiLSTM's vocabulary: use them with --set embedding=non-static (or\n"
     "  static, multichannel) --set vectors=FILE.vec. --dim 300 --epochs 5 --lr 0.05\n"
     "  --window 5 --neg 5 --min-count 5 --minn 3 --maxn 6 --bucket 2000000 --sample\n"
     "  1e-4 (the reference's defaults); GloVe: --window 10 --epochs 15 --x-max 100\n"
     "  --alpha 0.75, no n-grams. --seed S; --max-words N reads only the first N words.\n"
     "  WikiExtractor's <doc> lines are skipped. One thread is deterministic.\n"
     "  eval: the --k (default 5) nearest neighbours of --words (default a few) and,\n"
     "  with --analogies FILE (word2vec's questions-words format; data/analogies/ has\n"
     "  one), the accuracy of b - a + c per category; --json for a machine-readable line.\n"},
    {"score", cmd_score, "TASK PRED.tsv [--split dev] [--json]",
     "score a leaderboard-format prediction file against a task's labels",
     "  PRED.tsv has a header and rows 'index<TAB>prediction', with the label\n"
     "  strings the leaderboard wants (a number for STS-B).\n"},
    {"bleu", cmd_bleu, "HYP REF [REF ...] [--lowercase] [--chrf-lowercase] [--tokenize 13a|none] [--json]",
     "corpus BLEU and chrF, sacreBLEU's definitions (one or more references)",
     "  Corpus BLEU and chrF of the hypotheses HYP against one or more reference\n"
     "  files REF (one sentence a line, every file with the same number of lines,\n"
     "  .gz allowed; - reads HYP, or one REF, from stdin) as sacreBLEU 2.x computes\n"
     "  them. BLEU: 13a tokenisation (--tokenize none: the text as it is), n-grams\n"
     "  up to 4 clipped by their largest count in any of the line's references,\n"
     "  the reference length closest to the hypothesis's (the shorter on a tie),\n"
     "  'exp' smoothing, brevity penalty. chrF2: character 1..6-grams of the text\n"
     "  without whitespace, beta 2; each line takes the reference with its best\n"
     "  chrF. Case-sensitive unless --lowercase (BLEU) or --chrf-lowercase (chrF),\n"
     "  sacreBLEU's two options. Each score is\n"
     "  followed by its signature, as sacreBLEU prints it but with glue's version:\n"
     "  nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:glue-" GLUE_VERSION "\n"
     "  nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:glue-" GLUE_VERSION "\n"
     "  --json: one object with bleu, precisions, bp, ratio, lengths, lines,\n"
     "  nrefs, signature, chrf and chrf_signature.\n"},
    {"translate", cmd_translate,
     "train [--config F] [--set k=v ...] [--out DIR] [--seed S] [--threads N] [--resume] [--overwrite] "
     "[--stop-at STEP] [--checkpoint-every STEPS] [--quiet]  |  "
     "eval [--model DIR|CKPT] [--split test2016|test2017|mscoco|test2018|val] "
     "[--beam 5] [--alpha A] [--out FILE] [--results F] [--threads N] [--json]  |  snapshot RUN_DIR OUT_DIR  |  "
     "[--model DIR|CKPT] [--beam N] [--alpha A] [--threads N] [TEXT...]",
     "English->German transformer on Multi30k: train, BLEU, translate text (stdin: lines)",
     "  train: a transformer encoder-decoder built from BERT's sublayers, shared cased\n"
     "  WordPiece vocabulary (trained into the run dir unless 'vocab' is set), label\n"
     "  smoothing, warm-up + inverse-sqrt AdamW; dev BLEU after each epoch, best\n"
     "  checkpoint kept in runs/translate/ (or --out DIR); --resume continues exactly\n"
     "  from the resume point resume/ (saved each epoch, every --checkpoint-every steps\n"
     "  and on SIGINT/SIGTERM, then exit 130/143; resume.prev/ is the one before).\n"
     "  Settings (--set key=value; glue translate --help-settings lists them with\n"
     "  their defaults): positions sinusoid|learned|lpr, model size, schedule, ...\n"
     "  eval: BLEU of the detokenised output against the raw references (sacreBLEU:\n"
     "  cased, 13a) and lower-cased against data/mt/multi30k/tok; writes hypotheses;\n"
     "  --results FILE.json adds the run's scores to a table of runs (and FILE.md).\n"
     "  snapshot: a run's model.ckpt in half precision with its config.json and\n"
     "  results.json, in OUT_DIR (how models/translate-en-de-multi30k was made).\n"
     "  Otherwise translates each TEXT, or stdin line by line (UTF-8, as for predict: a\n"
     "  line that is not gets an empty output line and the command exits 65), with --model DIR|CKPT,\n"
     "  else runs/translate when you trained one, else the shipped\n"
     "  models/translate-en-de-multi30k (run from the repository).\n"},
    {"finetune", cmd_finetune,
     "TASK [--model NAME] [--epochs N] [--lr X] [--batch N] [--max-len N] "
     "[--seed S | --seeds S1,S2,..] [--init CKPT|DIR] [--threads N] [--out DIR] [--config FILE.json] "
     "[--set key=value ...] [--resume] [--overwrite] [--checkpoint-every STEPS] [--search ...] [--strict] [--json]  |  "
     "--train FILE --dev FILE [--test FILE] ...",
     "train a model on a task, keep the best dev checkpoint in runs/<task>/<model>/",
     "  Trains on the task's train split for the configured epochs (shuffled per\n"
     "  epoch by --seed), evaluates on dev after each epoch with the task's metrics\n"
     "  (MNLI: dev_matched selects, dev_mismatched is reported) and keeps the best\n"
     "  checkpoint. Writes model.ckpt, config.json and results.json. --model NAME:\n"
     "  bert (the default), fasttext, textcnn, bilstm, textrnn, rcnn, han, dpcnn,\n"
     "  transformer, dmn, entnet, seq2seq_attn (README's models table). Settings come\n"
     "  from the model's defaults, then --config, then the options and --set.\n"
     "  --resume continues an interrupted run in the same directory exactly, from\n"
     "  its resume point (resume/: saved each epoch, every --checkpoint-every steps\n"
     "  and on SIGINT/SIGTERM, then exit 130/143; resume.prev/ is the one before).\n"
     "  A directory holding a finished or interrupted run is refused unless --resume\n"
     "  or --overwrite (trains it again, the old run kept until the new one finishes).\n"
     "  --init CKPT|DIR (BERT) starts from a pretrained encoder: a glue checkpoint, a\n"
     "  directory holding one, or a Hugging Face model directory (config.json,\n"
     "  model.safetensors, vocab.txt) such as `glue export` writes; or a fine-tuned\n"
     "  run of another task (intermediate-task transfer: the encoder carries over,\n"
     "  the task head is new). --set intermediate=TASK (BERT) does both stages in one\n"
     "  run: TASK's default recipe from the same encoder and seed into DIR/intermediate\n"
     "  (reused when finished), then this task from it.\n"
     "  --search [--lrs L1,L2,..] [--batches B1,B2,..] [--holdout 0.1]: trains each\n"
     "  lr x batch (default: the BERT miniatures' grid, 3e-4,1e-4,5e-5,3e-5 x\n"
     "  8,16,32,64,128) on the training split minus a held-out slice (the same for\n"
     "  every trial), picks the best held-out score, retrains it on the full split\n"
     "  and reports dev: dev never takes part in the choice. Into --out DIR (default\n"
     "  runs/<task>/<model>-search): one directory per trial, final/, search.json;\n"
     "  run again (--resume or not), finished trials are reused and a stopped one\n"
     "  continues; with an intermediate task, one stage in DIR/intermediate serves all.\n"
     "  Your own dataset instead of TASK: --train FILE --dev FILE [--test FILE]\n"
     "  [--format tsv|csv|jsonl|fasttext] [--columns TEXT[,TEXT_B],LABEL] [--no-header]\n"
     "  [--regression | --multi-label [--label-sep S]] [--name NAME]: the format from\n"
     "  the file name or --format, columns by header name (1-based numbers with\n"
     "  --no-header, keys for JSONL), classes = the train file's labels in sorted\n"
     "  order (--multi-label: several a row, a cell's joined by --label-sep, default\n"
     "  ','; docs/data.md); the run records the dataset (dataset.json) so eval,\n"
     "  predict and compare NAME reuse it.\n"
     "  --strict: a malformed row is fatal (else reported and skipped with a count).\n"
     "  glue finetune multi --tasks A,B,... [options above]: multi-task (MT-DNN): one\n"
     "  BERT encoder, a head per task, batches drawn by task size (--set temperature=T:\n"
     "  p ~ n^(1/T), 1 = proportional), every task's dev metrics per epoch; into\n"
     "  runs/multi/bert (--out DIR), whose encoder glue finetune TASK --init DIR takes.\n"
     "  --set intermediate=multi[:A+B+..] makes it a task's first stage (docs/multitask.md).\n"},
    {"pretrain", cmd_pretrain,
     "[--config FILE.json] [--corpus [FORMAT:]FILE ...] [--set key=value ...] [--out DIR] [--resume] [--overwrite] "
     "[--stop-at STEP] [--cache DIR] [--threads N]  |  prepare ...  |  eval --init CKPT ...  |  screen RUN_DIR ...  |  snapshot RUN_DIR OUT_DIR",
     "pretraining of a BERT encoder (masked LM or ELECTRA); held-out MLM evaluation; screening",
     "  Objectives (\"objective\"): \"mlm\", BERT's masked LM, or \"electra\",\n"
     "  replaced-token detection: a small generator (generator_size of the width,\n"
     "  sharing the embeddings) fills the masked positions with samples and the\n"
     "  encoder learns which tokens were replaced (loss gen + disc_weight * disc).\n"
     "  Settings: the defaults (BERT's recipe on the tiny model), then --config\n"
     "  (pretrain/tiny.json, pretrain/mini.json), then --set key=value; --corpus\n"
     "  replaces the corpus (FORMAT: text, wikiextractor, brown, wikitext, auto).\n"
     "  The corpus is WordPiece-tokenized once into a cache (--cache DIR, default\n"
     "  $GLUE_CACHE or ~/.cache/glue). Writes to --out (default runs/pretrain/<config>):\n"
     "  resume/ (the full state, every checkpoint_every steps, at the end, and on\n"
     "  SIGINT/SIGTERM), model.ckpt (weights, for glue finetune --init), log.jsonl,\n"
     "  summary.json, config.json. --resume continues exactly where resume/\n"
     "  stopped (starts fresh if there is none; resume.prev/, the one before, if it is\n"
     "  damaged), with the same settings but steps: another value moves the\n"
     "  schedule's end. --stop-at STEP saves and exits there.\n"
     "  Exit code 130/143 after saving on SIGINT/SIGTERM.\n"
     "\n"
     "  glue pretrain prepare [--config F] [--corpus ...] [--cache DIR] [--json]\n"
     "    only tokenizes the corpus into the cache and prints its size.\n"
     "  glue pretrain eval --init CKPT|RUNDIR [--corpus [FORMAT:]FILE] [--batch 64]\n"
     "      [--seq-len 128] [--seed 12345] [--max-batches N] [--vocab FILE] [--json]\n"
     "    held-out MLM loss and accuracy (default text: WikiText-2 valid), with\n"
     "    BERT's 15% / 80-10-10 masking drawn from a fixed seed, so checkpoints are\n"
     "    compared on the same masked positions.\n"
     "  glue pretrain screen RUN_DIR... [--tasks sst2,cola,mrpc,stsb,rte] [--seeds 42]\n"
     "      [--set key=value ...] [--results FILE.json] [--threads N]\n"
     "    fine-tunes each task from each finished run's encoder (default recipe,\n"
     "    SST-2 one epoch; into RUN_DIR/screen/; done ones reused) and writes one\n"
     "    table of runs, recipes, held-out MLM and proxy scores (FILE.json + .md;\n"
     "    default runs/results/pretrain_screen.json; rows replaced by run name).\n"
     "  glue pretrain snapshot RUN_DIR OUT_DIR\n"
     "    the run's current encoder in half precision (OUT_DIR/model.ckpt, with the\n"
     "    run's config and log): what to commit so a long run lost with its machine\n"
     "    continues from these weights (--set init=OUT_DIR, a fresh optimizer and\n"
     "    schedule) rather than from zero. --set init=CKPT|RUN_DIR starts any run\n"
     "    from a checkpoint of the same architecture (continued pretraining).\n"},
    {"eval", cmd_eval, "TASK|all [--model M] [--run DIR | --init DIR|CKPT] [--split dev|test] [--submit FILE.zip] "
                       "[--results FILE] [--bf16 | --int8] [--json]",
     "evaluate trained runs on dev, or write test predictions for the leaderboard",
     "  Loads runs/<task>/<model>/model.ckpt, or for one TASK the run directory --run DIR\n"
     "  (e.g. a glue finetune --out or --seeds run), or --init: a run directory, a\n"
     "  model.ckpt, or a Hugging Face BertForSequenceClassification directory\n"
     "  (config.json with id2label, model.safetensors, vocab.txt) scored as it is\n"
     "  (its labels must be the task's, or LABEL_0.. in the task's order).\n"
     "  --split dev prints the task's metrics\n"
     "  (and for 'all' one table with the GLUE score); --split test writes the\n"
     "  leaderboard file (e.g. SST-2.tsv) into the run directory. AX uses the MNLI run.\n"
     "  'all' on dev prints one Markdown table with the GLUE score over the tasks run\n"
     "  and writes it as JSON to runs/results/glue.json (glue-<model>.json for\n"
     "  other models; --results FILE). 'all --split test --submit FILE.zip' writes the\n"
     "  leaderboard archive: the 11 files, a task without a trained model as its\n"
     "  majority class (flagged); a task without test data is listed as missing.\n"
     "  A run on your own dataset: glue eval NAME --model M, or --run DIR; --split\n"
     "  test scores the dataset's --test file (given to glue finetune).\n"
     "  --bf16 (bert): the encoder's dense layers with bf16 weights and products\n"
     "  (AVX512-BF16), an inference approximation; see docs/results.md for its accuracy.\n"
     "  On a CPU without AVX512-BF16 it runs the fp32 path (faster there) and says so.\n"
     "  --int8 (bert): the encoder's dense layers with int8 weights quantized as the\n"
     "  run loads (glue quantize stores them); see glue quantize --help.\n"},
    {"predict", cmd_predict, "TASK [--model M] [--run DIR | --init DIR|CKPT] [TEXT [TEXT_B]] [--bf16 | --int8] [--json]",
     "label and probabilities (STS-B: a score) for a text or a pair",
     "  With no TEXT reads stdin: one text, or a<TAB>b for pair tasks, per line,\n"
     "  and prints one prediction per line (--json: one object with all of them).\n"
     "  The model: --run DIR (the run says its task and model: TASK and --model\n"
     "  may be left out), --init as for glue eval, or runs/<task>/<model>.\n"},
    {"serve", cmd_serve,
     "--run DIR | --run NAME=DIR ... [--host 127.0.0.1] [--port 8080] [--threads N] [--workers N] [--max-batch 64] "
     "[--max-wait-ms 5] [--max-pending 4096] [--max-body BYTES] [--max-text BYTES] [--max-texts 1024] [--timeout S] "
     "[--max-connections 256] [--drain-seconds 30]",
     "answer predictions of trained runs over HTTP",
     "  POST /v1/predict {\"texts\": [...]} or {\"pairs\": [[a, b], ...]} (\"model\": NAME when\n"
     "  several are served) answers each text's label and probabilities (or score;\n"
     "  a multi-label model: \"labels\", each it predicts under its run's rule),\n"
     "  with the model's name, kind, task and version (its checkpoint's CRC-32).\n"
     "  GET /v1/models lists them, /healthz says ok, /metrics is Prometheus text.\n"
     "  Concurrent requests are batched: a free inference thread (--workers) waits\n"
     "  up to --max-wait-ms for --max-batch texts of one model, or only until the\n"
     "  clients it just answered have sent again. Bounded: --max-body (at most\n"
     "  1 GiB), --max-text bytes and --max-texts per request (413), --max-pending texts\n"
     "  queued (503), a connection silent for --timeout seconds is closed. A bad\n"
     "  request is a 400 saying what is wrong. SIGTERM/SIGINT: stop accepting,\n"
     "  answer what is in flight (up to --drain-seconds), exit 0.\n"},
    {"compare", cmd_compare,
     "TASK|all [--with qnli-9k] [--models fasttext,textcnn,bilstm] [--retrain] [--seed S | --seeds S1,S2,..] "
     "[--init CKPT|DIR] [--set [TASK.]key=value]... [--threads N] [--json]",
     "train (or reuse) several models on tasks and print one comparison table",
     "  Reuses runs/<task>/<model>/ when it finished with the model's current\n"
     "  default settings, otherwise trains. Prints every task metric, the GLUE score,\n"
     "  training time, inference examples/s and parameters, plus a majority-class\n"
     "  row; --with qnli-9k adds the QNLI subset task and a second GLUE score that\n"
     "  counts it as QNLI (labelled QNLI-9k; the six-task score stays as it is);\n"
     "  --seeds: one run per seed and model, each cell the seeds' mean, the\n"
     "  GLUE score with its spread over seeds. Writes runs/results/compare.json\n"
     "  and compare.md ($GLUE_RESULTS: elsewhere;\n"
     "  the repository's results/ only when named).\n"},
    {"ensemble", cmd_ensemble,
     "[TASK] --runs DIR,DIR,... | TASK --models M1,M2 [--seeds S1,S2,..] [--weights w1,w2,...|dev] "
     "[--set combine=probs|logits] [--set threshold=T|tuned] [--set top_k=K] [--out DIR] [--overwrite] [--json]",
     "combine finished runs into one run: the weighted mean of their probabilities or logits",
     "  Members must be finished runs of one task with one label order (refused\n"
     "  otherwise, before anything is written); --models takes compare's runs of\n"
     "  each model and seed. --weights dev fits the weights on dev by a coordinate\n"
     "  search over a simplex grid (never on test; its dev numbers are optimistic).\n"
     "  Writes runs/<task>/ensemble (--out DIR): eval, predict and compare read it\n"
     "  like any run; a multi-label ensemble averages the sigmoid probabilities,\n"
     "  then applies its rule (tuned: on the ensemble's dev outputs).\n"},
    {"boost", cmd_boost,
     "TASK --model M [--rounds R] [--seed S] [--epochs N] [--set key=value]... [--out DIR] [--overwrite] "
     "[--threads N] [--json]",
     "stacked boosting: R rounds (default 3) of a model on SAMME-reweighted examples, combined by their vote",
     "  Round k+1 trains with per-example loss weights from round k's errors on\n"
     "  the training split (SAMME, as scikit-learn's AdaBoostClassifier; for two\n"
     "  classes AdaBoost.M1); the rounds vote with weights\n"
     "  alpha = log((1-err)/err) + log(K-1). Rounds are runs of their own\n"
     "  (<OUT>-round<k>; run again, boost reuses each finished round of the same\n"
     "  settings, seed and weights, --overwrite trains them again); OUT\n"
     "  (runs/<task>/boost) is read by eval, predict and compare like any run.\n"
     "  Single-label tasks; not fastText (its own step).\n"
     "  The other form, brightmart's label-error reweighting, is a setting of\n"
     "  any classifier: glue finetune ... --set boost=label_error.\n"},
    {"protocol", cmd_protocol,
     "[--tasks cola,mrpc,stsb,rte] [--seeds 1,2,3,4,5] [--model bert] [--init CKPT|DIR] "
     "[--set key=value]... [--change NAME:key=value[,task.key=value...]]... [--out DIR] [--results FILE.json] "
     "[--threads N]",
     "measure changes of the fine-tuning recipe over seeds: one table of their effects",
     "  Row 'baseline' is the model's default recipe (with every --set); each --change adds one row with\n"
     "  its settings (a key written task.key applies to that task only). Every row\n"
     "  fine-tunes each task for each seed into runs/protocol/<row>/<task>-seed<S>/\n"
     "  (reused when finished, resumed when interrupted) and the table gets, per\n"
     "  task, the mean and spread over seeds of the dev score at the best epoch\n"
     "  (selected on dev, as finetune does: optimistic, alike for every row), the\n"
     "  row's mean and its difference from the baseline. Writes\n"
     "  runs/results/finetune_protocol.json and .md (rows updated by name).\n"
     "  Intermediate stages (intermediate=TASK) go to runs/protocol/intermediate/\n"
     "  <task>-seed<S>-<hash>/, one per seed and stage config, shared by the rows.\n"},
    {"bench", cmd_bench,
     "fasttext [--task sst2] [--epoch 5] [--dim 100] [--wordNgrams 1] [--threads 2] [--reps 3] [--fasttext PATH] "
     "[--quantize] [--dsub 2] [--cutoff 0] [--qnorm] [--qout] [--retrain] [--qepoch 5] [--qlr 0.05] [--json]  |  "
     "bert [--config tiny|mini|small] [--reps 7] [--steps N] [--threads 2] [--python PATH] [--script FILE] "
     "[--no-torch] [--json]  |  "
     "rnn [--reps 5] [--threads 2] [--batch 64] [--dim 300] [--hidden 512] [--lengths 20,70] [--python PATH] "
     "[--script FILE] [--no-torch] [--json]  |  "
     "scaling [--config tiny|mini|FILE ...] [--steps 20] [--reps 3] [--ranks 2] [--threads 2] [--batch 64] "
     "[--zero 0|1] [--corpus FILE] [--out NAME.json]",
     "benchmarks against reference implementations (fastText: the official binary; BERT: PyTorch)",
     "  fasttext: trains Debian's /usr/bin/fasttext and ours on the same task with the\n"
     "  same settings, alternating A/B for --reps rounds, and prints dev accuracy and\n"
     "  end-to-end training time (median, min, max) of each and their ratio. Writes\n"
     "  runs/results/bench_fasttext.json. Needs: apt-get install fasttext (or\n"
     "  --fasttext PATH). --quantize (or any of --dsub --cutoff --qnorm --qout --retrain\n"
     "  --qepoch --qlr) then compresses both models (fasttext quantize; glue quantize)\n"
     "  and adds their sizes and dev accuracies.\n"
     "  bert: our BERT against the same model in PyTorch (/usr/bin/python3, Debian's\n"
     "  python3-torch) on this machine, A/B alternating over --reps after a warm-up:\n"
     "  a pretraining step (tokens/s, and GFLOP/s against OpenBLAS sgemm on the\n"
     "  step's own GEMMs), batch inference, single-sentence latency, and the same two\n"
     "  with bf16 weights (against PyTorch bf16 autocast); medians with min and max,\n"
     "  the CPU and the kernels named. Writes runs/results/bench/<cpu>/\n"
     "  bench_bert_<config>.json (make bench: the repository's results/).\n"
     "  scaling [--config tiny|mini|FILE ...] [--steps 20] [--reps 3] [--batch 64]\n"
     "  [--zero 0|1] [--corpus FILE]: pretraining as 1 process x 2 threads against\n"
     "  mpirun -np 2 x 1 thread, A/B for --reps rounds: tokens/s, all-reduce time and\n"
     "  bytes per step, AdamW state per rank (--zero 1: sharded, ZeRO-1).\n"
     "  Writes runs/results/bench_scaling.json (--out NAME.json). Needs a build with MPI.\n"
     "  rnn: our BiLSTM and BiGRU layers against PyTorch's nn.LSTM and nn.GRU (the\n"
     "  BiLSTM's size: input 300, hidden 512, batch 64; rows of --lengths steps),\n"
     "  a training step and inference, medians of --reps after a warm-up, each\n"
     "  side timed in turn. Writes runs/results/bench/<cpu>/bench_rnn.json and .md.\n"},
    {"report", cmd_report, "[--runs DIR] [--results DIR] [--out report.html] [--pretrain DIR ...] [--no-predict]",
     "one self-contained HTML page of every result and run, with plots",
     "  Reads runs/results/ (or --results DIR, e.g. the repository's results/, or\n"
     "  $GLUE_RESULTS): compare.json, glue*.json, protocols, screens, fuzz*.json,\n"
     "  seeds, run results, translation.json, bench_*.json; and runs/ (or --runs,\n"
     "  $GLUE_RUNS): every run directory. Writes one HTML file (inline SVG and CSS,\n"
     "  nothing fetched; default report.html): the GLUE table with the best of each\n"
     "  column marked and the seed spread, a bar chart per task, learning curves,\n"
     "  the pretraining curves of the shipped encoder (or each --pretrain DIR), a\n"
     "  confusion matrix per classification run and an STS-B scatter (dev\n"
     "  predictions made now from each run's model.ckpt; --no-predict skips them),\n"
     "  translation BLEU and benchmark ratios with their CPU, and the source of\n"
     "  every number. Inputs that are missing or unreadable are listed at the top\n"
     "  of the page; the command fails only when the page cannot be written.\n"},
    {"quantize", cmd_quantize,
     "RUN_DIR... [--out DIR] [--overwrite] [--results FILE.json] [--calibrate N] [--threads N] [--json]",
     "write a fine-tuned run as an int8 run (a quarter of the checkpoint)",
     "  BERT: each encoder layer's dense weights (QKV, attention output, FFN in and\n"
     "  out) stored in int8 with a scale per output row; at inference the activations\n"
     "  entering them are quantized per row (7 bits with a zero point) and the\n"
     "  products run in int32 (AVX512-VNNI, AVX2 or portable kernels, the same\n"
     "  integers from each). Embeddings, LayerNorm, the attention's scores and\n"
     "  softmax, the pooler and the heads stay fp32. Writes DIR (default\n"
     "  RUN_DIR-int8): model.ckpt, config.json, and results.json with the int8\n"
     "  model's dev metrics (measured now) as \"best\" and the fp32 ones under\n"
     "  \"quantized\"; eval, predict, compare and report read it like any run.\n"
     "  glue eval/predict --int8 quantizes a run the same way as it loads.\n"
     "  --calibrate N: SmoothQuant factors from N training examples (0, the\n"
     "  default: none). An existing copy is refused unless --overwrite. Several\n"
     "  RUN_DIRs: each into its own RUN_DIR-int8; --results FILE.json: one table of\n"
     "  fp32 against int8 dev metrics. fastText runs are product-quantized as\n"
     "  `fasttext quantize` does (RUN_DIR-pq): [--dsub 2] [--cutoff 0] [--qnorm]\n"
     "  [--qout] [--retrain] [--epoch 5] [--lr 0.05]. Other models have no\n"
     "  quantized path yet (the command says so and fails).\n"},
    {"export", cmd_export, "CKPT OUTDIR [--vocab FILE] [--task TASK] [--overwrite] [--threads N] [--json]",
     "write a glue BERT checkpoint as a Hugging Face model directory",
     "  CKPT is a model.ckpt (or a run directory holding one). Writes OUTDIR/config.json,\n"
     "  model.safetensors (F32, Hugging Face parameter names), vocab.txt and\n"
     "  tokenizer_config.json, which transformers' from_pretrained loads as\n"
     "  BertForSequenceClassification (with a classifier), BertForMaskedLM (with an\n"
     "  MLM head) or BertModel. id2label comes from --task or the run's task; the\n"
     "  vocabulary from --vocab or the default one, and must match the model's size.\n"
     "  An OUTDIR that holds any of those files is refused unless --overwrite.\n"
     "  The other way: `glue finetune TASK --init DIR` reads such a directory.\n"},
};
static const int NUM_COMMANDS = (int)(sizeof COMMANDS / sizeof COMMANDS[0]);

static void print_overview(FILE *f) {
    fprintf(f, "glue — GLUE tasks, BERT and baselines, in one binary\n\n"
               "usage: glue <command> [options]   (glue <command> --help for details)\n"
               "       glue --version                (the CPU and the kernels chosen for it)\n\n"
               "commands:\n");
    for (int i = 0; i < NUM_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    /* core/exit_codes.h: one code per kind of failure, whichever command. */
    fprintf(f, "\nexit codes:\n"
               "  0    success\n"
               "  1    the work failed (a model diverged, a metric is not a number, ...)\n"
               "  2    usage: a command line, option value or setting is wrong (unknown, out of range)\n"
               "  %d   data: an input's contents are wrong (malformed or empty split, bad label,\n"
               "       invalid UTF-8, damaged checkpoint or JSON)\n"
               "  %d   I/O: a file is missing, unreadable or cannot be written\n"
               "  %d  interrupted: %d + the signal (SIGINT %d, SIGTERM %d), after saving for --resume\n",
            EXIT_DATA, EXIT_IO, EXIT_SIGNAL_BASE + SIGINT, EXIT_SIGNAL_BASE, EXIT_SIGNAL_BASE + SIGINT,
            EXIT_SIGNAL_BASE + SIGTERM);
}

/* `glue CMD --help-settings`: every --set key of the command with its default
 * (finetune: of --model, default bert, and of TASK when given). */
static int print_settings(const char *cmd, int argc, char **argv) {
    cJSON *d = NULL;
    const char *what = cmd;
    const SettingSpec *spec = NULL, *model_spec = NULL;
    int nspec = 0, nmodel = 0;
    const Task *task = NULL;   /* finetune TASK: the task's own defaults */
    if (strcmp(cmd, "finetune") == 0) {
        const char *model = "bert", *named = NULL;   /* named: a model's name where the task goes */
        for (int k = 2; k < argc; k++) {
            if (strcmp(argv[k], "--model") == 0 && k + 1 < argc) model = argv[++k];
            else if (strncmp(argv[k], "--model=", 8) == 0) model = argv[k] + 8;
            else if (argv[k][0] != '-' && !task && !(task = task_find(argv[k])) && model_find(argv[k]))
                named = argv[k];
        }
        if (named && strcmp(model, "bert") == 0) {   /* no --model: the name given is the model meant */
            fprintf(stderr, "glue: %s is a model, not a task: its settings (glue finetune TASK --model %s "
                    "trains it)\n", named, named);
            model = named;
        }
        const ModelOps *ops = cli_find_model(model);
        if (!ops) return EXIT_USAGE;
        d = ops->default_config(task);
        what = ops->name;
        spec = ops->settings;
        nspec = ops->num_settings;
    } else if (strcmp(cmd, "pretrain") == 0) {
        d = pretrain_config_defaults();
        spec = pretrain_config_settings(&nspec);
    } else if (strcmp(cmd, "translate") == 0) {
        d = s2s_run_config_default();
        spec = s2s_run_settings(&nspec);
        model_spec = s2s_model_settings(&nmodel);   /* the model's keys beside the run's */
    } else {
        user_error("finetune, pretrain and translate have --set keys", "glue %s has no settings", cmd);
        return EXIT_USAGE;
    }
    printf("--set keys of glue %s (%s), their defaults%s%s and values:\n", cmd, what, task ? " for " : "",
           task ? task->name : "");
    for (const cJSON *it = d->child; it; it = it->next) {
        char *v = cJSON_PrintUnformatted(it), range[512];
        settings_describe(spec, nspec, it->string, range, sizeof range);
        if (!range[0] && model_spec) settings_describe(model_spec, nmodel, it->string, range, sizeof range);
        printf("  %-20s %-28s %s\n", it->string, v, range);
        free(v);
    }
    cJSON_Delete(d);
    return 0;
}

static void print_command_help(const Command *c) {
    printf("usage: glue %s %s\n\n%s\n\n%s", c->name, c->usage, c->summary, c->details);
}

/* `glue --version`: what this binary runs here — the kernel level chosen from
 * the CPU (core/kernels.h; GLUE_KERNELS may lower it), the GEMM (core/sgemm.h)
 * and the CPU. */
static int print_version(void) {
    printf("glue %s (commit %s), C11, built for x86-64-v2 with hot loops chosen at run time\n", GLUE_VERSION,
           provenance_commit());
    printf(
           "kernels: %s (this CPU supports up to %s%s; GLUE_KERNELS=portable|avx2|avx512|avx512bf16|amx lowers it)\n"
           "gemm: %s (GLUE_GEMM=openblas|own forces one)\n"
           "cpu: %s\n",
           kernels_level_name(kernels_level()), kernels_level_name(kernels_cpu_level()),
           kernels_cpu_level() == KERN_AVX512BF16 && !kernels_bf16_dot_fast()
               ? ", but its bf16 dot product is slower than fp32 FMAs: not the default"
               : "",
           gemm_backend_describe(), kernels_cpu_model());
    return 0;
}

/* The command's exit code, once what it printed has reached standard output's
 * file or pipe: `glue predict --json > out.jsonl` on a full disk lost the
 * predictions and still said 0. An I/O failure (74) when it did not (a
 * failure the command already reported keeps its own code). */
static int stdout_delivered(int rc) {
    errno = 0;
    int flushed = fflush(stdout) == 0, err = errno;
    if (flushed && !ferror(stdout)) return rc;
    /* stdio keeps only an error flag for an earlier failed write: its reason is known only when this flush failed */
    user_error_io("check free disk space where the output goes", "cannot write the output (standard output)%s%s: "
                  "part of it is lost", err ? ": " : "", err ? strerror(err) : "");
    return rc ? rc : EXIT_IO;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) return print_version();
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        if (argc >= 3 && strcmp(argv[1], "help") == 0) {
            for (int i = 0; i < NUM_COMMANDS; i++)
                if (strcmp(COMMANDS[i].name, argv[2]) == 0) { print_command_help(&COMMANDS[i]); return 0; }
        }
        print_overview(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    for (int i = 0; i < NUM_COMMANDS; i++) {
        const Command *c = &COMMANDS[i];
        if (strcmp(c->name, argv[1]) != 0) continue;
        for (int k = 2; k < argc; k++)
            if (strcmp(argv[k], "--help-settings") == 0) return print_settings(c->name, argc, argv);
        for (int k = 2; k < argc; k++)
            if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
                print_command_help(c);
                return 0;
            }
        /* Under mpirun every rank would run the command alone and write the
         * same files: only `glue pretrain` (training) and `glue finetune`
         * are data-parallel (each calls dist_init). */
        int finetune = strcmp(c->name, "finetune") == 0;
        if (dist_launched() && !finetune &&
            (strcmp(c->name, "pretrain") != 0 ||
             (argc >= 3 && (strcmp(argv[2], "eval") == 0 || strcmp(argv[2], "prepare") == 0 ||
                            strcmp(argv[2], "screen") == 0)))) {
            user_error("run it without mpirun", "glue %s does not run data-parallel: under mpirun only 'glue pretrain' "
                       "(training) and 'glue finetune' do", c->name);
            return EXIT_USAGE;
        }
        return stdout_delivered(exit_code_resolve(c->fn(argc - 1, argv + 1)));
    }
    int best = 0, best_d = str_edit_distance(argv[1], COMMANDS[0].name);
    for (int i = 1; i < NUM_COMMANDS; i++) {
        int d = str_edit_distance(argv[1], COMMANDS[i].name);
        if (d < best_d) best = i, best_d = d;
    }
    char tail[96];
    const char *guess = str_is_near(argv[1], best_d) ? COMMANDS[best].name : NULL;
    user_error("run 'glue --help' for the list of commands", "unknown command '%s'%s", argv[1],
               str_did_you_mean(guess, tail, sizeof tail));
    return EXIT_USAGE;
}
