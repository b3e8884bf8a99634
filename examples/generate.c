/* generate.c: greedy text generation with libtfm (tfm.h).
 *
 *   cc generate.c $(pkg-config --cflags --libs tfm) -o generate
 *   ./generate model.gguf "Once upon a time" 32
 *
 * MODEL is a .gguf, a Hugging Face folder, or a folder tfmc wrote (then
 * give its WEIGHTS, and a TOKENIZER unless the weights are a GGUF). The
 * text goes to standard output, the token ids to standard error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfm.h>

static int failed(void) {
  fprintf(stderr, "generate: %s\n", tfm_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: generate MODEL PROMPT [TOKENS [WEIGHTS [TOKENIZER]]]\n");
    return 2;
  }
  tfm_load_params load = tfm_load_default_params();
  load.weights = argc > 4 ? argv[4] : NULL;
  load.tokenizer = argc > 5 ? argv[5] : NULL;
  tfm_sampler_params sampling = tfm_sampler_default_params();
  sampling.temperature = 0; /* greedy */
  tfm_lm *lm;
  tfm_seq *seq;
  tfm_sampler *sampler;
  if (tfm_lm_load(argv[1], &load, &lm) || tfm_seq_new(lm, &seq) ||
      tfm_sampler_new(&sampling, &sampler))
    return failed();

  int64_t context = tfm_lm_context_length(lm), steps = argc > 3 ? atoll(argv[3]) : 32;
  int32_t *ids = malloc(context * sizeof *ids);
  int64_t n = tfm_lm_tokenize(lm, argv[2], strlen(argv[2]), tfm_lm_adds_bos(lm), ids, context);
  if (n < 0 || n > context || tfm_seq_prefill(seq, ids, n))
    return n > context ? fprintf(stderr, "generate: the prompt is too long\n"), 1 : failed();
  printf("%s", argv[2]);
  for (int64_t i = 0; i < steps && n < context; ++i) {
    int32_t next = tfm_sampler_sample(sampler, tfm_seq_logits(seq), tfm_lm_vocab_size(lm));
    if (next == tfm_lm_eos(lm))
      break;
    char piece[256];
    int64_t length = tfm_lm_token_text(lm, ids[n - 1], next, piece, sizeof piece);
    if (length > (int64_t)sizeof piece)
      length = sizeof piece; /* a longer piece is cut */
    fwrite(piece, 1, length, stdout);
    fflush(stdout);
    ids[n++] = next;
    if (i + 1 < steps && tfm_seq_decode(seq, next))
      return failed();
  }
  printf("\n");
  for (int64_t i = 0; i < n; ++i)
    fprintf(stderr, "%s%d", i ? " " : "", ids[i]);
  fprintf(stderr, "\n");
  free(ids);
  tfm_sampler_free(sampler);
  tfm_seq_free(seq);
  tfm_lm_free(lm);
  return 0;
}
