/* Linked with one library's every object and nothing but the libraries it declares it uses: a
 * reference to any other library (a dependency upward, a cycle) fails this link. */
int main(void) { return 0; }
