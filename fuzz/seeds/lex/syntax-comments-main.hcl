# hash comment at top
// slash comment
/* block
   comment */
locals {
  a = 1 # trailing hash
  b = 2 // trailing slash
  c = /* inline */ 3
}

resource comments {
  /*
  resource-level block comment with "quotes" and ${not_interpolated}
  */
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "comments" } # after object
    data = {
      sum  = a + b + c
      text = "# not a comment // nor this /* nor this */"
    }
  }
}
