function f {
  arg a {}
  body = self.name
}
