function make {
  arg "a b" {}
  body = 1
}
