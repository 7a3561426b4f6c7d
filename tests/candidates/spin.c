/* spin.c: an endless loop that never makes a system call. */
int main(void)
{
    for (volatile unsigned long i = 0;; i++)
        ;
}
