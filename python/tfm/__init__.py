"""tfm: tfmc's runtime from Python, through libtfm.so (ctypes; numpy for
logits, imported when they are asked for).

    import tfm
    model = tfm.Model("model.gguf")
    ids = model.tokenize("Once upon a time")
    text, new_ids = model.generate("Once upon a time", max_tokens=32)
    logits = model.logits(ids)          # numpy float32 [len(ids), vocab]

libtfm.so is found through $TFM_LIBRARY, else in the install this module
belongs to (cmake --install puts it in PREFIX/lib/python3/dist-packages),
else on the dynamic loader's path (LD_LIBRARY_PATH, the system's).
"""

import ctypes
import os

__all__ = ["Model", "TfmError", "version"]

API_VERSION = 1  # tfm.h's TFM_API_VERSION that these bindings follow


class TfmError(RuntimeError):
    """A libtfm call failed; the message is tfm_last_error()'s."""


class _LoadParams(ctypes.Structure):
    _fields_ = [("weights", ctypes.c_char_p), ("tokenizer", ctypes.c_char_p),
                ("target", ctypes.c_char_p), ("schedule", ctypes.c_char_p),
                ("activations", ctypes.c_char_p), ("cache_dir", ctypes.c_char_p),
                ("compiler", ctypes.c_char_p), ("threads", ctypes.c_int),
                ("device", ctypes.c_int), ("no_mmap", ctypes.c_int)]


class _SamplerParams(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int64),
                ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
                ("repeat_penalty", ctypes.c_float), ("repeat_last_n", ctypes.c_int64),
                ("seed", ctypes.c_uint64)]


def _library_path():
    name = "libtfm.so.%d" % API_VERSION
    if os.environ.get("TFM_LIBRARY"):
        return os.environ["TFM_LIBRARY"]
    # PREFIX/lib/python3/dist-packages/tfm/ -> PREFIX/lib/
    installed = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", name)
    return installed if os.path.exists(installed) else name


def _load_library():
    lib = ctypes.CDLL(_library_path())
    handle = ctypes.c_void_p
    i32p, i64, f32p = ctypes.POINTER(ctypes.c_int32), ctypes.c_int64, ctypes.POINTER(ctypes.c_float)
    signatures = {
        "tfm_api_version": (ctypes.c_int, []),
        "tfm_version": (ctypes.c_char_p, []),
        "tfm_last_error": (ctypes.c_char_p, []),
        "tfm_load_default_params": (_LoadParams, []),
        "tfm_lm_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_LoadParams),
                                       ctypes.POINTER(handle)]),
        "tfm_lm_free": (None, [handle]),
        "tfm_lm_name": (ctypes.c_char_p, [handle]),
        "tfm_lm_vocab_size": (i64, [handle]),
        "tfm_lm_context_length": (i64, [handle]),
        "tfm_lm_hidden_size": (i64, [handle]),
        "tfm_lm_is_encoder": (ctypes.c_int, [handle]),
        "tfm_lm_bos": (ctypes.c_int32, [handle]),
        "tfm_lm_eos": (ctypes.c_int32, [handle]),
        "tfm_lm_adds_bos": (ctypes.c_int, [handle]),
        "tfm_lm_tokenize": (i64, [handle, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                                  i32p, i64]),
        "tfm_lm_token_text": (i64, [handle, ctypes.c_int32, ctypes.c_int32, ctypes.c_char_p,
                                    ctypes.c_size_t]),
        "tfm_seq_new": (ctypes.c_int, [handle, ctypes.POINTER(handle)]),
        "tfm_seq_free": (None, [handle]),
        "tfm_seq_prefill": (ctypes.c_int, [handle, i32p, i64]),
        "tfm_seq_decode": (ctypes.c_int, [handle, ctypes.c_int32]),
        "tfm_seq_score": (ctypes.c_int, [handle, i32p, i64, f32p]),
        "tfm_seq_encode": (ctypes.c_int, [handle, i32p, i64, f32p]),
        "tfm_seq_logits": (f32p, [handle]),
        "tfm_sampler_default_params": (_SamplerParams, []),
        "tfm_sampler_new": (ctypes.c_int, [ctypes.POINTER(_SamplerParams),
                                           ctypes.POINTER(handle)]),
        "tfm_sampler_free": (None, [handle]),
        "tfm_sampler_sample": (ctypes.c_int32, [handle, f32p, i64]),
        "tfm_sampler_accept": (None, [handle, ctypes.c_int32]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    if lib.tfm_api_version() != API_VERSION:
        raise TfmError(f"{lib._name} implements tfm API {lib.tfm_api_version()}; these "
                       f"bindings follow version {API_VERSION}")
    return lib


_lib = _load_library()


def _check(status):
    if status < 0:
        raise TfmError(_lib.tfm_last_error().decode("utf-8", "replace"))
    return status


def _ids_array(ids):
    return (ctypes.c_int32 * len(ids))(*ids)


def version():
    """"tfmc X.Y.Z (commit)" of the libtfm.so loaded."""
    return _lib.tfm_version().decode()


def _encoded(text):
    return None if text is None else os.fsencode(text)


class Model:
    """A model: a folder tfmc wrote (give `weights`, and `tokenizer` unless
    the weights are a GGUF), a .gguf, or a Hugging Face folder (compiled on
    first use and cached)."""

    def __init__(self, path, weights=None, tokenizer=None, threads=0, target=None,
                 cache_dir=None):
        params = _lib.tfm_load_default_params()
        params.weights, params.tokenizer = _encoded(weights), _encoded(tokenizer)
        params.target, params.cache_dir = _encoded(target), _encoded(cache_dir)
        params.threads = threads
        self._handle = ctypes.c_void_p()
        _check(_lib.tfm_lm_load(os.fsencode(path), ctypes.byref(params),
                                ctypes.byref(self._handle)))
        self.name = _lib.tfm_lm_name(self._handle).decode()
        self.vocab_size = _lib.tfm_lm_vocab_size(self._handle)
        self.context_length = _lib.tfm_lm_context_length(self._handle)
        self.hidden_size = _lib.tfm_lm_hidden_size(self._handle)
        self.is_encoder = bool(_lib.tfm_lm_is_encoder(self._handle))
        self.bos, self.eos = _lib.tfm_lm_bos(self._handle), _lib.tfm_lm_eos(self._handle)

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.tfm_lm_free(self._handle)
            self._handle = None

    def tokenize(self, text, add_bos=None):
        """Token ids of `text`, BOS first when the model's tokenizer adds one
        (or as `add_bos` says)."""
        data = text.encode("utf-8")
        bos = _lib.tfm_lm_adds_bos(self._handle) if add_bos is None else int(add_bos)
        count = _check(_lib.tfm_lm_tokenize(self._handle, data, len(data), bos, None, 0))
        ids = (ctypes.c_int32 * count)()
        _check(_lib.tfm_lm_tokenize(self._handle, data, len(data), bos, ids, count))
        return list(ids)

    def token_text(self, previous, token):
        """The bytes printed for `token` after `previous` (-1 at the start)."""
        length = _check(_lib.tfm_lm_token_text(self._handle, previous, token, None, 0))
        buffer = ctypes.create_string_buffer(max(length, 1))
        _check(_lib.tfm_lm_token_text(self._handle, previous, token, buffer, length))
        return buffer.raw[:length]

    def detokenize(self, ids):
        """The text of `ids`, a leading BOS left out."""
        start = 1 if ids and ids[0] == self.bos else 0
        pieces = [self.token_text(ids[i - 1] if i > 0 else -1, ids[i])
                  for i in range(start, len(ids))]
        return b"".join(pieces).decode("utf-8", "replace")

    def _sequence(self):
        sequence = ctypes.c_void_p()
        _check(_lib.tfm_seq_new(self._handle, ctypes.byref(sequence)))
        return sequence

    def logits(self, ids):
        """Every position's logits of `ids` run from position 0: a float32
        numpy array [len(ids), vocab_size]."""
        import numpy as np  # only here: text generation needs no numpy

        out = np.empty((len(ids), self.vocab_size), dtype=np.float32)
        sequence = self._sequence()
        try:
            _check(_lib.tfm_seq_score(sequence, _ids_array(ids), len(ids),
                                      out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
        finally:
            _lib.tfm_seq_free(sequence)
        return out

    def hidden_states(self, ids):
        """An encoder's (BERT's) last hidden state of every token of `ids`,
        one text: a float32 numpy array [len(ids), hidden_size]."""
        import numpy as np

        out = np.empty((len(ids), self.hidden_size), dtype=np.float32)
        sequence = self._sequence()
        try:
            _check(_lib.tfm_seq_encode(sequence, _ids_array(ids), len(ids),
                                       out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
        finally:
            _lib.tfm_seq_free(sequence)
        return out

    def generate(self, prompt, max_tokens=32, temperature=0.0, top_k=0, top_p=0.95, min_p=0.0,
                 repeat_penalty=1.0, repeat_last_n=64, seed=42, stop_at_eos=True):
        """Generates up to `max_tokens` after `prompt` (a string, or a list of
        ids): returns (the new text, every id: the prompt's, then the new)."""
        ids = self.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
        params = _lib.tfm_sampler_default_params()
        params.temperature, params.top_k, params.top_p, params.min_p = (temperature, top_k,
                                                                        top_p, min_p)
        params.repeat_penalty, params.repeat_last_n, params.seed = (repeat_penalty,
                                                                    repeat_last_n, seed)
        sampler, sequence = ctypes.c_void_p(), self._sequence()
        try:
            _check(_lib.tfm_sampler_new(ctypes.byref(params), ctypes.byref(sampler)))
            for token in ids:
                _lib.tfm_sampler_accept(sampler, token)
            _check(_lib.tfm_seq_prefill(sequence, _ids_array(ids), len(ids)))
            pieces = []
            for step in range(max_tokens):
                if len(ids) >= self.context_length + 1:
                    break
                token = _check(_lib.tfm_sampler_sample(
                    sampler, _lib.tfm_seq_logits(sequence), self.vocab_size))
                if stop_at_eos and token == self.eos:
                    ids.append(token)
                    break
                pieces.append(self.token_text(ids[-1], token))
                ids.append(token)
                if step + 1 < max_tokens and len(ids) <= self.context_length:
                    _check(_lib.tfm_seq_decode(sequence, token))
            return b"".join(pieces).decode("utf-8", "replace"), ids
        finally:
            _lib.tfm_seq_free(sequence)
            _lib.tfm_sampler_free(sampler)
