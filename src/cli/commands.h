/* commands.h — every `glue` command: `int cmd_<name>(int argc, char **argv)`,
 * argv[0] being the command's name. Returns the process exit code (0 ok, 1 the
 * work failed, 2 usage). The dispatch table with usage strings is in src/main.c. */
#ifndef GLUE_COMMANDS_H
#define GLUE_COMMANDS_H

typedef int (*CommandFn)(int argc, char **argv);

int cmd_tasks(int argc, char **argv);
int cmd_data(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_vocab(int argc, char **argv);
int cmd_vectors(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_bleu(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_finetune(int argc, char **argv);
/* `glue finetune multi --tasks ...` (cmd_finetune_multi.c), which cmd_finetune hands over to. */
int cmd_finetune_multi(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_ensemble(int argc, char **argv);
int cmd_boost(int argc, char **argv);
int cmd_protocol(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_pretrain(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
