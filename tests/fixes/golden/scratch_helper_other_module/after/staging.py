"""A helper of another module that stages the input in shared memory it takes from get_global."""


def staged(x_ref, tile):
  tile[...] = x_ref[...]
  return tile[...]
